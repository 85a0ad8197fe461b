# bash completion for fabscope: the commands fabscope --help lists, then
# each command's options as its own --help lists them (so they never go stale), then files.
_fabscope() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		local cmds
		cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	case "$cur" in
	-*)
		local opts
		opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null |
			grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9_-]*' | tr -d ' ,' | sort -u)
		COMPREPLY=($(compgen -W "$opts --version" -- "$cur"))
		;;
	*)
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	esac
}
complete -o filenames -F _fabscope fabscope
