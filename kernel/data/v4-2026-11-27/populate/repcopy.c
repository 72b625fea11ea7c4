#include <stdio.h>
#include <stdint.h>
#include <time.h>
static char a[4096] __attribute__((aligned(4096))), b[4096] __attribute__((aligned(4096)));
static uint64_t ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
int main(void){
  for (int k=0;k<3;k++){
  uint64_t t0=ns();
  for(int i=0;i<10000;i++){void*d=a;const void*s=b;unsigned long c=4096;asm volatile("rep movsb":"+D"(d),"+S"(s),"+c"(c)::"memory");}
  uint64_t t1=ns();
  for(int i=0;i<10000;i++){void*d=a;const void*s=b;unsigned long c=512;asm volatile("rep movsq":"+D"(d),"+S"(s),"+c"(c)::"memory");}
  uint64_t t2=ns();
  for(int i=0;i<10000;i++){asm volatile("":::"memory");}
  uint64_t t3=ns();
  printf("rep_movsb_4k %.1f rep_movsq_4k %.1f empty %.1f (instructions per iteration under -icount)\n",(t1-t0)/1e4,(t2-t1)/1e4,(t3-t2)/1e4);}
  return 0;}
