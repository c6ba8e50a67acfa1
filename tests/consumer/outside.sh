# shellcheck shell=bash
# outside.sh - sourced by the tests that build a program the way README.md
# tells a user to: stage_install BUILD SRCROOT installs BUILD into a scratch
# root and takes README's PKG_CONFIG_PATH line and run path (-Wl,-rpath)
# as written there, with PREFIX the staged prefix. A README that stops
# giving them, or gives a library directory meson does not install into,
# fails here: the user would be left with a program that does not link or
# does not start.
#
# Sets: root (removed at exit), PREFIX, PKG_CONFIG_PATH, rpath (the linker
# flag), bindir, readme.
#
# readme_snippet README OUT needs none of that: scripts/check-packages.sh
# takes the snippet with it into a Debian root where only the packages are.

# Fail with a message (tests/meson.build: exit 77 is a skip, 1 a failure).
fail() {
	echo "$*"
	exit 1
}

stage_install() {
	local build=$1 src=$2 pc prefix libdir want have
	readme=$src/README.md
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT

	meson install -C "$build" --no-rebuild --quiet --destdir "$root" >/dev/null
	pc=$(find "$root" -name pagepool.pc -print -quit)
	[ -n "$pc" ] || fail "pagepool.pc was not installed"
	# The staged tree stands in for an install at its configured prefix:
	# PREFIX is where it lies, and pkg-config puts the stage in front of
	# the .pc files' own paths (which name the configured prefix).
	prefix=$(sed -n 's/^prefix=//p' "$pc")
	PREFIX=$root$prefix
	# shellcheck disable=SC2034 # for the scripts that source this
	bindir=$PREFIX/bin
	export PKG_CONFIG_SYSROOT_DIR=$root

	want=$(grep -m1 '^export PKG_CONFIG_PATH=' "$readme") ||
		fail "README.md does not say 'export PKG_CONFIG_PATH=...': a user cannot find pagepool.pc in a prefix of their own"
	rpath=$(grep -m1 -o -- '-Wl,-rpath,[^ ]*' "$readme") ||
		fail "README.md does not link with -Wl,-rpath,...: a user's program would not find libpagepool.so.0 at run time"
	# README is written for Debian's x86_64; elsewhere the multiarch
	# directory is this machine's (doc/install.md).
	libdir=$(dirname "$(dirname "$pc")")
	have=$(basename "$libdir")
	case $have in
	*-linux-*) want=${want//x86_64-linux-gnu/$have}; rpath=${rpath//x86_64-linux-gnu/$have} ;;
	esac
	eval "$want"
	eval "rpath=$rpath"
	[ "$PKG_CONFIG_PATH" = "$libdir/pkgconfig" ] ||
		fail "README.md says PKG_CONFIG_PATH=${PKG_CONFIG_PATH#"$root"}, but meson installed pagepool.pc into ${libdir#"$root"}/pkgconfig: correct README.md and doc/install.md"
	[ "$rpath" = "-Wl,-rpath,$libdir" ] ||
		fail "README.md links with ${rpath//"$root"/}, but meson installed the libraries into ${libdir#"$root"}: correct README.md and doc/install.md"
}

# build_outside OUT SRC PKG: cc as README has it (pkg-config, the run path),
# strict: C11 with no feature macro from outside, every warning an error.
build_outside() {
	# shellcheck disable=SC2046 # pkg-config's words are flags
	cc -std=c11 -Wall -Wextra -Werror -o "$1" "$2" \
		$(pkg-config --cflags --libs "$3") "$rpath" ||
		fail "$2 does not build outside the tree with README's commands (above)"
	# The run path is what finds the libraries, not a copy elsewhere.
	if ldd "$1" | grep 'libpagepool' | grep -v "=> $root/" | grep -q .; then
		ldd "$1"
		fail "$1 would load a libpagepool from outside $PREFIX (above)"
	fi
}

# readme_snippet README OUT: README's first ```c block as a program of its
# own in OUT, wrapped in main() if it is not one already. Fails (1) when
# README has no such block.
readme_snippet() {
	local snippet
	snippet=$(awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$1")
	[ -n "$snippet" ] || return 1
	if ! grep -q 'main(' <<<"$snippet"; then
		{
			grep '^#include' <<<"$snippet"
			echo 'int main(void) {'
			grep -v '^#include' <<<"$snippet"
			echo 'return 0; }'
		} >"$2"
	else
		printf '%s\n' "$snippet" >"$2"
	fi
}
