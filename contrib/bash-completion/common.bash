# The helpers every pagepool completion shares; meson puts this file in
# front of each program's own (one installed file per program, as
# bash-completion loads them on demand), so each may be sourced alone.
#
# bash splits COMP_WORDS at COMP_WORDBREAKS, ':' and '=' among them, and
# device strings (af_xdp:eth0, veth0,peer=veth1), PCI addresses
# (0000:00:02.0) and --opt=value all hold one. These helpers split the
# line at blanks only, complete whole words, and hand readline back only
# the part after its own word's start.

# Sets cur, prev, words and cword from the line up to the cursor, and
# _pagepool_cut: the head of cur that readline keeps (up to the last
# COMP_WORDBREAKS character in it).
_pagepool_init()
{
	local line=${COMP_LINE:0:COMP_POINT} i
	IFS=$' \t\n' read -r -a words <<<"$line"
	if [[ -z $line || $line == *[[:blank:]] ]]; then
		words+=("")
	fi
	cword=$((${#words[@]} - 1))
	cur=${words[cword]}
	prev=
	((cword > 0)) && prev=${words[cword - 1]}
	_pagepool_cut=
	for ((i = ${#cur} - 1; i >= 0; i--)); do
		if [[ ${COMP_WORDBREAKS-} == *"${cur:i:1}"* ]]; then
			_pagepool_cut=${cur:0:i+1}
			break
		fi
	done
}

# COMPREPLY: those of the words given that start with cur (each prefixed
# with $_pagepool_pre, e.g. "--mode=" for --mode=VALUE), less the head
# readline keeps. A word that ends where more must follow ('=', ':', ',')
# gets no space after it.
_pagepool_reply()
{
	local w
	for w in "$@"; do
		w=${_pagepool_pre-}$w
		[[ $w == "$cur"* ]] || continue
		COMPREPLY+=("${w#"$_pagepool_cut"}")
		if [[ $w == *[=:,] ]]; then
			compopt -o nospace 2>/dev/null
		fi
	done
}

# File names for a value (after _pagepool_pre), as compgen finds them.
_pagepool_files()
{
	local f
	compopt -o filenames 2>/dev/null
	while IFS= read -r f; do
		if [[ -d $f ]]; then
			f+=/
			compopt -o nospace 2>/dev/null
		fi
		f=${_pagepool_pre-}$f
		COMPREPLY+=("${f#"$_pagepool_cut"}")
	done < <(compgen -f -- "${cur#"${_pagepool_pre-}"}")
}

# Splits cur "--opt=value" into opt and the value's prefix: sets
# _pagepool_pre to "--opt=" and returns 0, or returns 1 for any other
# word (the value is then a word of its own, after prev).
_pagepool_split_eq()
{
	_pagepool_pre=
	[[ $cur == --*=* ]] || return 1
	_pagepool_pre=${cur%%=*}=
	return 0
}
