#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# test_devbind.sh - pp-devbind over a fake sysfs tree (PP_DEVBIND_ROOT):
# what it refuses, what it writes, and what a failure leaves behind.
#
#   test_devbind.sh PP-DEVBIND
#
# The world is a temporary directory: root/ is what pp-devbind sees as /
# (/sys/bus/pci with e1000e-like devices, their drivers and interfaces,
# /sys/class/net, /proc/net/route and if_inet6, /run), and victim/ lies
# outside it, shaped like a PCI device so that a path that climbs out of
# root/ finds something to write to.
#
# Plain files cannot act as the kernel does when written to, so the three
# kinds of file where it acts are FIFOs: each driver's bind and unbind,
# and /sys/bus/pci/drivers_probe. pp-devbind waits at each until kernel(),
# run beside it with the steps the kernel would take, has taken them; the
# driver link is then what the kernel would have made it. Any other write
# lands in a plain file. A write to a FIFO that kernel() does not expect
# blocks until the run's timeout and fails the check.
#
# Needs neither root nor devices. Exit 0 when every check passed.
set -u

bin=${1:?usage: test_devbind.sh PP-DEVBIND}
T=10 # seconds any one run, or one kernel step, may take

t=$(mktemp -d) || exit 1
R=$t/world/root
V=$t/world/victim
P=$R/sys/bus/pci
W=$t/scratch
kpid=
cleanup() {
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null && unblock
	rm -rf "$t"
}
trap cleanup EXIT
mkdir -p "$W" "$P/devices" "$P/drivers" "$R/sys/class/net" "$R/proc/net" \
	"$R/run" "$V" "$t/world/vdrv"
mkfifo "$P/drivers_probe"

# driver NAME: a driver, its bind and unbind files the kernel's (FIFOs).
driver() {
	mkdir -p "$P/drivers/$1"
	mkfifo "$P/drivers/$1/bind" "$P/drivers/$1/unbind"
}

# device ADDR DRIVER [IF FLAGS]: a network device (class 0x020000) bound
# to DRIVER ('-' for none), no driver_override, whose ID the kernel gives
# to e1000e (id_driver, read by kernel() only); with interface IF whose
# flags are FLAGS (0x1003: up, 0x1002: down).
device() {
	d=$P/devices/$1
	mkdir -p "$d"
	echo 0x8086 > "$d/vendor"
	echo 0x10d3 > "$d/device"
	echo 0x020000 > "$d/class"
	echo '(null)' > "$d/driver_override"
	echo e1000e > "$d/id_driver"
	[ "$2" = - ] || ln -s "../../drivers/$2" "$d/driver"
	if [ $# -gt 2 ]; then
		mkdir -p "$d/net/$3"
		echo "$4" > "$d/net/$3/flags"
		ln -s "../../../$1" "$d/net/$3/device"
		ln -s "../../bus/pci/devices/$1/net/$3" "$R/sys/class/net/$3"
	fi
}

driver e1000e
driver vfio-pci
# A driver that is loaded but takes no device (as vfio-pci does when the
# device's IOMMU group is unusable).
driver picky
: > "$P/drivers/picky/refuses"
# A driver whose unbind is a directory: a write to it fails (EISDIR), even
# as root, for whom a read-only file would not.
mkdir -p "$P/drivers/broken/unbind"

device 0000:00:03.0 e1000e eth0 0x1002   # bind/restore round trip
device 0000:00:04.0 e1000e eth1 0x1003   # up
device 0000:00:05.0 e1000e eth2 0x1002   # down, with an address and a route
device 0000:00:06.0 broken               # its driver's unbind fails
device 0000:00:07.0 e1000e               # bound to a driver that refuses it
device 0000:00:08.0 e1000e               # restored by name
echo vfio-pci > "$P/devices/0000:00:08.0/id_driver"
device 0000:00:0a.0 -                    # upper/lower case, no driver
device 000a:0b:1f.7 -                    # the highest device and function
device 0000:00:20.0 -                    # device 0x20: not an address
device 0000:00:03.8 -                    # function 8: not an address
mkdir "$R/sys/class/net/dummy0"          # an interface without a device
# A virtio NIC: its interface, up, belongs to virtio3 below the function.
device 0000:00:09.0 e1000e
mkdir -p "$P/devices/0000:00:09.0/virtio3/net/eth3"
echo 0x1003 > "$P/devices/0000:00:09.0/virtio3/net/eth3/flags"
ln -s ../../../virtio3 "$P/devices/0000:00:09.0/virtio3/net/eth3/device"
ln -s ../../bus/pci/devices/0000:00:09.0/virtio3/net/eth3 "$R/sys/class/net/eth3"
printf '%s\n' \
	'00000000000000000000000000000001 01 80 10 80       lo' \
	'fd000000000000000000000000000005 05 40 00 80     eth2' \
	> "$R/proc/net/if_inet6"
printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n' \
	> "$R/proc/net/route"
printf 'eth2\t0005000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n' \
	>> "$R/proc/net/route"
# The victim, outside root/: what an address that climbs out would reach.
for f in vendor device class driver_override; do cp "$P/devices/0000:00:03.0/$f" "$V/"; done
ln -s ../vdrv "$V/driver"
: > "$t/world/vdrv/unbind"

# kernel STEP...: the kernel's side of the next run, in the background.
#   unbind DRV ADDR  ADDR is written to DRV's unbind: the device loses its
#                    driver and its interfaces
#   probe ADDR       the device goes to its driver_override, or else to
#                    the driver of its ID, if there is such a driver and
#                    it takes devices (no DRV/refuses); then ADDR is taken
#                    from drivers_probe
#   bind DRV ADDR    ADDR is written to DRV's bind: the device goes to DRV,
#                    unless it has a driver (the kernel says EBUSY; a FIFO
#                    cannot, so the link is left as it is)
# and, where a device's driver_override is a FIFO too (see its test):
#   read-override ADDR VALUE   its driver_override is read: it says VALUE
#   override ADDR [VALUE]      VALUE ('' for none) is written to it
kernel() {
	(
		take() { # FIFO WANT
			got=$(timeout $T cat "$1")
			[ "$got" = "$2" ] && return
			echo "kernel: expected '$2' written to $1, got '$got'"
			exit 1
		}
		ovr='(null)'
		for step in "$@"; do
			set -- $step
			d=$P/devices/$2
			case $1 in
			unbind)
				take "$P/drivers/$2/unbind" "$3"
				rm -f "$P/devices/$3/driver"
				rm -rf "$P/devices/$3/net" ;;
			probe)
				if [ -p "$d/driver_override" ]; then
					drv=$ovr
				else
					drv=$(cat "$d/driver_override")
				fi
				case $drv in '' | '(null)') drv=$(cat "$d/id_driver") ;; esac
				if [ ! -L "$d/driver" ] && [ -d "$P/drivers/$drv" ] &&
				   [ ! -e "$P/drivers/$drv/refuses" ]; then
					ln -s "../../drivers/$drv" "$d/driver"
				fi
				take "$P/drivers_probe" "$2" ;;
			bind)
				take "$P/drivers/$2/bind" "$3"
				[ -L "$P/devices/$3/driver" ] ||
					ln -s "../../drivers/$2" "$P/devices/$3/driver" ;;
			read-override)
				echo "$3" | timeout $T sh -c 'cat > "$0"' "$d/driver_override" ;;
			override)
				take "$d/driver_override" "${3:-}"
				ovr=${3:-} ;;
			esac
		done
	) > "$W/kernel.log" 2>&1 < /dev/null &
	kpid=$!
}

# Let a kernel() blocked on a FIFO go: an open for writing wakes the
# reader, and the close gives it end of file.
unblock() {
	find "$R" -type p | while read -r f; do : <> "$f"; done
}

# kernel_done: whether kernel() took every step, each write it waited for
# made, and as expected.
kernel_done() {
	i=0
	while kill -0 "$kpid" 2>/dev/null && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$kpid" 2>/dev/null; then
		kill "$kpid"
		unblock
		wait "$kpid"
		kpid=
		echo "kernel: pp-devbind did not make every write expected" >> "$W/kernel.log"
		return 1
	fi
	wait "$kpid"
	rc_kernel=$?
	kpid=
	return $rc_kernel
}

# run ARG...: pp-devbind over the fake root; output in $W/out, exit in $rc.
# A sanitizer's report fails the test even where pp-devbind is meant to
# fail.
run() {
	PP_DEVBIND_ROOT=$R timeout $T "$bin" "$@" > "$W/out" 2>&1
	rc=$?
	if grep -qE 'Sanitizer|runtime error:' "$W/out"; then
		bad "sanitizer report: pp-devbind $*"
	fi
}

# The whole world, for before/after comparisons: every entry with its
# type, mode and link target, and every regular file's hash.
snap() {
	(cd "$t/world" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
	 find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2)
}

failed=0
ok() { echo "ok   $*"; }
bad() {
	echo "FAIL $*"
	sed 's/^/     | /' "$W/out"
	[ -s "$W/kernel.log" ] && sed 's/^/     k /' "$W/kernel.log"
	failed=$((failed + 1))
}

# refused PATTERN ARG...: pp-devbind ARG... fails, says PATTERN, and
# nothing in the world changes.
refused() {
	pat=$1
	shift
	snap > "$W/before"
	run "$@"
	snap > "$W/after"
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF -- "$pat" "$W/out" &&
	   cmp -s "$W/before" "$W/after"; then
		ok "refused: $*"
	else
		bad "refused: $* (exit $rc; wanted a message with '$pat' and no change)"
		diff "$W/before" "$W/after" | sed 's/^/     d /'
	fi
}

# passes NAME ARG...: with the kernel steps already started, pp-devbind
# ARG... exits 0 and the kernel took every step; more checks follow.
passes() {
	name=$1
	shift
	run "$@"
	if kernel_done && [ $rc -eq 0 ]; then
		return 0
	fi
	bad "$name: pp-devbind $* (exit $rc)"
	return 1
}

# link ADDR: the driver the device is bound to, '-' for none.
link() {
	l=$(readlink "$P/devices/$1/driver") || { echo -; return; }
	echo "${l##*/}"
}
override() { cat "$P/devices/$1/driver_override"; }
state() { cat "$R/run/pagepool/devbind/$1" 2>/dev/null || echo none; }

# ---- device names: only DDDD:BB:DD.F, BB:DD.F and interfaces ----
fmt='is neither a PCI address nor an interface name: write DDDD:BB:DD.F'
long=$(printf '%0300d' 0)
climb=../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../..$V
for arg in ../../x a/b 0000:00:03.0/../../x . .. "$long" abcdefghijklmnop \
	   0000:00:20.0 0000:00:03.8 0000:00:1g.0 00000:00:03.0 000:00:03.0 \
	   0000:00:03:0 '0000:00:03.0 ' ' 00:03.0' 0:00:03.0 '' \
	   eth0/../../../x "$climb" 0000:00:0a.0/ 0000:00:03.a; do
	refused "$fmt" --bind vfio-pci "$arg"
	refused "$fmt" --unbind "$arg"
	refused "$fmt" --restore "$arg"
done
# One bad name among good ones: nothing is done for any.
refused "$fmt" --bind vfio-pci 0000:00:0a.0 ../x
refused "$fmt" --unbind 0000:00:0a.0 a/b
# Well formed, but no such device or interface.
refused 'no PCI device 0000:00:1e.0' --bind vfio-pci 0000:00:1e.0
refused 'no PCI device 0000:00:1e.0' --unbind 00:1e.0
refused 'no PCI device 0001:00:03.0' --restore 0001:00:03.0
refused 'no interface eth9' --bind vfio-pci eth9
refused 'dummy0 is not on a PCI device' --unbind dummy0
# Driver names: one plain name.
for drv in ../x a/b . .. '' 'vfio pci' "$long" ../../../../../../../..$V; do
	refused 'is not a driver name' --bind "$drv" 0000:00:0a.0
done
# What cannot name a driver is a bad argument (exit 2), refused before
# any file is read for it: a word that starts with '-' (getopt gives
# --bind the next word, so "--bind --force DEV" named a driver
# "--force"), and bytes the kernel's names never have. 0000:00:04.0 has
# a driver (e1000e) and an interface that is up: a name that got as far
# as the driver's directory would be refused for another reason, exit 1.
for drv in - -5 'vfio*' 'vfio;pci' 'vfio,pci' \
	   "vfio'pci" 'vfio$pci' 'vfio\pci' "$(printf 'vfio\tpci')" \
	   "$(printf 'vfio\302\240pci')" "$(printf '%064d' 0)"; do
	refused 'is not a driver name' --bind "$drv" 0000:00:04.0
	if [ $rc -ne 2 ]; then bad "--bind '$drv': exit 2 for a bad argument (got $rc)"; fi
done
# An option as the next word: refused as getopt hands it over
# (pp_cli_check_value()), before the options after it are looked at.
for drv in --force -f --restore -x --status; do
	refused "pp-devbind: option '--bind' needs a value, not the option '$drv'" \
		--bind "$drv" 0000:00:04.0
	if [ $rc -ne 2 ]; then bad "--bind $drv: exit 2 for a bad argument (got $rc)"; fi
done
refused "option '-b' needs a value, not the option '--force'" -b --force eth1
# In the same word it is meant as the value: still no driver name.
refused "'--force' is not a driver name: it is an option, and --bind takes the driver as the next word: pp-devbind --force --bind DRIVER DEV" \
	--bind=--force 0000:00:04.0
refused "'-x' is not a driver name: it is an option" -b-x eth1
# Letters, digits, '_', '-' and '.', up to 63 bytes: a name, whether or
# not the kernel has that driver.
for drv in a.b_c-9 mlx5_core 3w-9xxx "$(printf '%063d' 0)"; do
	refused "no driver $drv in /sys/bus/pci/drivers" --bind "$drv" 0000:00:0a.0
done

# Upper and lower case hex, the short form, the highest device and
# function: accepted (no driver, so --unbind has nothing to write).
for arg in 0000:00:0a.0 0000:00:0A.0 00:0A.0 00:0a.0 000A:0B:1F.7 000a:0b:1f.7; do
	snap > "$W/before"
	run --unbind "$arg"
	snap > "$W/after"
	if [ $rc -eq 0 ] && cmp -s "$W/before" "$W/after"; then
		ok "accepted: --unbind $arg"
	else
		bad "accepted: --unbind $arg (exit $rc)"
	fi
done

# ---- devices in use by the kernel: refused, unless --force ----
run --status
if [ $rc -eq 0 ] && grep -q '^0000:00:04.0 .* eth1 (active)$' "$W/out" &&
   grep -q '^0000:00:03.0 .* e1000e .* eth0$' "$W/out"; then
	ok "--status shows interfaces, the active one marked"
else
	bad "--status"
fi
refused 'eth1 (up)' --bind vfio-pci 0000:00:04.0
refused 'eth1 (up)' --unbind eth1
# --restore of a device pp-devbind never bound (no driver_override, no
# driver remembered): that is the reason, not the interface that is up.
refused 'nothing to restore: pp-devbind never bound it' --restore 00:04.0
refused 'nothing to restore: pp-devbind never bound it' --restore 0000:00:0a.0
# A driver that is not there: that is the reason, before the interface
# that is up, and before any device loses its driver.
refused 'no driver nosuchdrv in /sys/bus/pci/drivers: load its module (modprobe nosuchdrv)' \
	--bind nosuchdrv 0000:00:04.0
refused 'no driver nosuchdrv in /sys/bus/pci/drivers: load its module (modprobe nosuchdrv)' \
	--bind nosuchdrv 0000:00:03.0
refused 'eth2 (addresses fd00::5/64; routes 10.0.5.0/24)' --bind vfio-pci eth2
refused 'take it down first (ip link set eth2 down; ip addr flush dev eth2), or pass --force' --unbind 0000:00:05.0
refused '0000:00:09.0 is in use by the kernel: eth3 (up)' --bind vfio-pci 0000:00:09.0
refused '0000:00:09.0 is in use by the kernel: eth3 (up)' --unbind eth3
# Both named, and the free device among them left alone too.
refused 'eth2 (addresses' --bind vfio-pci 0000:00:04.0 0000:00:03.0 0000:00:05.0
if grep -qF 'eth1 (up)' "$W/out"; then ok "every device in use named"; else bad "every device in use named"; fi
kernel 'unbind e1000e 0000:00:04.0' 'probe 0000:00:04.0'
if passes force --force --bind vfio-pci 0000:00:04.0 &&
   [ "$(link 0000:00:04.0)" = vfio-pci ] && [ "$(state 0000:00:04.0)" = e1000e ]; then
	ok "--force takes an interface that is up"
else
	bad "--force: driver $(link 0000:00:04.0), remembered $(state 0000:00:04.0)"
fi

# ---- a bind/restore round trip, by interface name and short form ----
kernel 'unbind e1000e 0000:00:03.0' 'probe 0000:00:03.0'
if passes bind --bind vfio-pci eth0 &&
   [ "$(link 0000:00:03.0)" = vfio-pci ] && [ "$(override 0000:00:03.0)" = vfio-pci ] &&
   [ "$(state 0000:00:03.0)" = e1000e ]; then
	ok "--bind vfio-pci eth0: bound to vfio-pci, e1000e remembered"
else
	bad "--bind vfio-pci eth0: driver $(link 0000:00:03.0), override '$(override 0000:00:03.0)', remembered $(state 0000:00:03.0)"
fi
kernel 'unbind vfio-pci 0000:00:03.0' 'probe 0000:00:03.0'
if passes restore --restore 00:03.0 &&
   [ "$(link 0000:00:03.0)" = e1000e ] && [ -z "$(override 0000:00:03.0)" ] &&
   [ "$(state 0000:00:03.0)" = none ]; then
	ok "--restore 00:03.0: back on e1000e, override cleared, nothing remembered"
else
	bad "--restore 00:03.0: driver $(link 0000:00:03.0), override '$(override 0000:00:03.0)', remembered $(state 0000:00:03.0)"
fi
# The ID's driver is vfio-pci (as after new_id), and it takes the device
# again: --restore must unbind it before it binds e1000e by name.
kernel 'unbind e1000e 0000:00:08.0' 'probe 0000:00:08.0'
passes bind --bind vfio-pci 0000:00:08.0
kernel 'unbind vfio-pci 0000:00:08.0' 'probe 0000:00:08.0' \
	'unbind vfio-pci 0000:00:08.0' 'bind e1000e 0000:00:08.0'
if passes restore --restore 0000:00:08.0 &&
   [ "$(link 0000:00:08.0)" = e1000e ] && [ "$(state 0000:00:08.0)" = none ]; then
	ok "--restore binds the remembered driver by name when the ID's driver takes it"
else
	bad "restore by name: driver $(link 0000:00:08.0), remembered $(state 0000:00:08.0)"
fi

# ---- failures midway leave driver_override as it was ----
snap > "$W/before"
run --bind vfio-pci 0000:00:06.0
if [ $rc -ne 0 ] && grep -qF 'unbinding 0000:00:06.0 from broken failed' "$W/out" &&
   case $(override 0000:00:06.0) in '' | '(null)') true ;; *) false ;; esac &&
   [ "$(link 0000:00:06.0)" = broken ] && [ "$(state 0000:00:06.0)" = none ]; then
	ok "unbind fails: driver_override cleared again"
else
	bad "unbind fails: exit $rc, override '$(override 0000:00:06.0)', driver $(link 0000:00:06.0)"
fi
echo broken > "$P/devices/0000:00:06.0/driver_override"
run --bind vfio-pci 0000:00:06.0
if [ $rc -ne 0 ] && [ "$(override 0000:00:06.0)" = broken ]; then
	ok "unbind fails: driver_override back to its old value"
else
	bad "unbind fails: exit $rc, override '$(override 0000:00:06.0)', wanted 'broken'"
fi
echo '(null)' > "$P/devices/0000:00:06.0/driver_override"
# The driver does not take the device, so it is left without one: the
# override is put back and the device probed again, back to e1000e. pp-devbind
# writes drivers_probe twice here, and a FIFO's reader can take a second
# writer's bytes as its own before it sees end of file; so the override,
# which is written between the two, is a FIFO too: pp-devbind waits there
# until the kernel is done with the first probe. kernel() checks each
# value written to it.
rm "$P/devices/0000:00:07.0/driver_override"
mkfifo "$P/devices/0000:00:07.0/driver_override"
kernel 'read-override 0000:00:07.0 (null)' 'override 0000:00:07.0 picky' \
	'unbind e1000e 0000:00:07.0' 'probe 0000:00:07.0' \
	'override 0000:00:07.0' 'probe 0000:00:07.0'
run --bind picky 0000:00:07.0
if kernel_done && [ $rc -ne 0 ] &&
   grep -qF 'did not bind to picky (now: -): the driver did not take it' "$W/out" &&
   grep -qF '0000:00:07.0 left as it was: driver e1000e, driver_override as before' "$W/out" &&
   [ "$(link 0000:00:07.0)" = e1000e ] && [ "$(state 0000:00:07.0)" = none ]; then
	ok "a driver that does not take it: override put back, device back on e1000e"
else
	bad "a driver that does not take it: exit $rc, driver $(link 0000:00:07.0)"
fi

# ---- the tool says what it takes ----
run --help
if [ $rc -eq 0 ] && grep -qF 'DDDD:BB:DD.F' "$W/out" && grep -qF -- '--force' "$W/out"; then
	ok "--help"
else
	bad "--help"
fi

echo "$failed failed"
[ $failed -eq 0 ]
