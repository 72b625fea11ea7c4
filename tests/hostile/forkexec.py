import os, sys
n = int(sys.argv[1]); mode = sys.argv[2]
buf = bytearray(4096 * 64)
for i in range(0, len(buf), 4096): buf[i] = 1
for k in range(n):
    p = os.fork()
    if p == 0:
        for i in range(0, len(buf), 4096): buf[i] = 2
        if mode == 'childexec': os.execv('/bin/true', ['true'])
        os._exit(0)
    os.waitpid(p, 0)
if mode in ('exec', 'childexec'):
    os.execv(sys.executable, [sys.executable, '-c', 'b=bytearray(1<<20)\nimport os\nfor k in range(20):\n p=os.fork()\n if p==0:\n  b[0]=1; os._exit(0)\n os.waitpid(p,0)'])
if mode == 'exectrue':
    os.execv('/bin/true', ['true'])
