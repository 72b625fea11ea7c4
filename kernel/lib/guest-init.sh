#!/bin/busybox sh
# /init of the cowbench guest initramfs (see kernel/vm-run.sh).
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mkdir -p /proc /sys /dev /tmp /out /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /out
mount -t tmpfs tmpfs /run
[ -e /dev/console ] || mknod /dev/console c 5 1
hostname cowbench-guest
cd /
# cowbench's rows carry the times of /proc/cow_stats (cow_copy_ns, cow_path_ns), which the patched
# kernel keeps only while vm.cow_stats_timing is 1 (its default is 0: no clock read when off).
# A command that measures the cost of the kernel with everything off writes 0 itself; a boot
# with "cowbench.notiming" on its command line (vm-run.sh --append) keeps the kernel's default.
if [ -w /proc/sys/vm/cow_stats_timing ] && ! grep -qw cowbench.notiming /proc/cmdline; then
	echo 1 > /proc/sys/vm/cow_stats_timing
fi
echo "@@COWBENCH-CMD-START@@"
# The command's stdout is kept apart from the console (kernel messages share the serial line):
# it goes to the host's stdout alone, exact to the byte; its stderr streams on the console.
/bin/sh /cmd > /run/cmd.stdout
rc=$?
sync
echo "@@COWBENCH-STDOUT-BEGIN@@"
base64 /run/cmd.stdout
echo "@@COWBENCH-STDOUT-END@@"
cd /out && find . -type f | while read -r f; do
	echo "@@COWBENCH-FILE-BEGIN@@ $f"
	base64 "$f"
	echo "@@COWBENCH-FILE-END@@"
done
echo "@@COWBENCH-EXIT@@ $rc"
poweroff -f
sleep 5
reboot -f
