# bash completion for fabscope: the commands fabscope --help lists, then
# each command's options as its own --help lists them, the values of the
# options that take one of a list, and --set's keys and their values as
# fabscope sim --keys lists them (so none of it goes stale); else files.
_fabscope_keys() { # the key table: "key<TAB>values" (values: a list, or empty)
	"$1" sim --keys 2>/dev/null | awk -F'|' 'NR > 2 {
		k = $2; gsub(/[ `]/, "", k); v = $4; sub(/^ +/, "", v); sub(/ +$/, "", v)
		if (k ~ /\[\]/) next
		if (v ~ /\.\./ || v ~ /[^a-z0-9_, .-]/) v = ""
		gsub(/,/, "", v)
		print k "\t" v }'
}

_fabscope() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=${COMP_WORDS[1]} f=${COMP_WORDS[0]}
	# bash splits "--set key=value" at '=' (COMP_WORDBREAKS): the words as
	# typed, from the line up to the cursor
	local eqbreak=
	if [ -n "$COMP_LINE" ]; then
		local line=${COMP_LINE:0:COMP_POINT} w
		read -ra w <<<"$line"
		if [[ "$line" == *" " ]]; then
			cur= prev=${w[${#w[@]} - 1]}
		else
			cur=${w[${#w[@]} - 1]} prev=${w[${#w[@]} - 2]}
		fi
		[[ "$COMP_WORDBREAKS" == *=* ]] && eqbreak=1
	fi
	if [ "$COMP_CWORD" -eq 1 ]; then
		local cmds
		cmds=$("$f" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	# an option's value: the key it sets, whose values the key table lists
	local key=
	case "$prev" in
	--set)
		if [[ "$cur" == *=* ]]; then
			key=${cur%%=*}
			local vals
			vals=$(_fabscope_keys "$f" | awk -F'\t' -v k="$key" '$1 == k { print $2 }')
			if [ -n "$eqbreak" ]; then # bash completes only what follows the '='
				COMPREPLY=($(compgen -W "$vals" -- "${cur#*=}"))
			else
				COMPREPLY=($(compgen -P "$key=" -W "$vals" -- "${cur#*=}"))
			fi
		else
			compopt -o nospace 2>/dev/null
			COMPREPLY=($(compgen -S = -W "$(_fabscope_keys "$f" | cut -f1)" -- "$cur"))
		fi
		return
		;;
	--format | -F) COMPREPLY=($(compgen -W "text json csv" -- "$cur")); return ;;
	--engine) key=engine ;;
	--algo | -a) key=collective.algo ;;
	--coll | --op) key=collective.op ;;
	--proto) key=nccl.proto ;;
	--placement) key=collective.placement ;;
	--ring-order) key=collective.ring_order ;;
	--datatype | -d) key=collective.datatype ;;
	esac
	if [ -n "$key" ]; then
		COMPREPLY=($(compgen -W "$(_fabscope_keys "$f" | awk -F'\t' -v k="$key" '$1 == k { print $2 }')" -- "$cur"))
		return
	fi
	case "$cur" in
	-*)
		local opts
		opts=$("$f" "$cmd" --help 2>/dev/null |
			grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9_-]*' | tr -d ' ,' | sort -u)
		COMPREPLY=($(compgen -W "$opts --version" -- "$cur"))
		;;
	*)
		COMPREPLY=($(compgen -f -- "$cur"))
		;;
	esac
}
complete -o filenames -F _fabscope fabscope
