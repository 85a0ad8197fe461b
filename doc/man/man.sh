#!/bin/sh
# Man pages from the program's own --help, so the two cannot disagree:
#   man.sh FABSCOPE OUTDIR    writes OUTDIR/fabscope.1 and fabscope-CMD.1
# The help is split into the sections man pages have: the usage lines
# become SYNOPSIS, the text before "options" DESCRIPTION, the options
# OPTIONS, "example(s):" EXAMPLES, "exit status:" EXIT STATUS; ENVIRONMENT
# comes from the table below (what each command reads); SEE ALSO lists the
# other pages.  Prose and options are filled by man to the reader's width
# (within 80 columns at MANWIDTH=80).
F=$1
out=$2
mkdir -p "$out"
ver=$("$F" --version | head -1 | sed 's/^fabscope //; s/ .*//')

# env CMD: the variables CMD reads, one "NAME<TAB>what" a line
env_of() {
	case $1 in
	coll)
		printf 'NCCL_TESTS_MIN_BW\tfail the run (exit 1) when the average bus bandwidth is under 0.9 x this (GB/s), as nccl-tests\n'
		printf 'SOURCE_DATE_EPOCH\t-J: the start and end times written (UTC), for files that compare byte for byte\n'
		;;
	sim)
		printf 'RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT\t--ranks: this process'"'"'s rank, the ranks, rank 0'"'"'s address (also OMPI_COMM_WORLD_RANK and _SIZE, PMI_RANK and PMI_SIZE, SLURM_PROCID and SLURM_NTASKS)\n'
		printf 'FABSCOPE_TOKEN\t--ranks: the job'"'"'s shared secret (default: the launcher'"'"'s job id)\n'
		printf 'FABSCOPE_THREADS_EXACT\t1: run as many threads as --threads asks, whatever the machine'"'"'s load\n'
		;;
	probe)
		printf 'RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT\tthis process'"'"'s rank, the ranks, rank 0'"'"'s address, as torchrun sets them\n'
		printf 'OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE\tthe same under Open MPI'"'"'s mpirun\n'
		printf 'PMI_RANK, PMI_SIZE\tthe same under MPICH and PMI launchers\n'
		printf 'SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST, SLURM_NODELIST, SLURM_JOB_ID, SLURM_STEP_ID\tthe same under srun; rank 0'"'"'s host and port from the step'"'"'s nodes and ids\n'
		printf 'FABSCOPE_TOKEN\tthe job'"'"'s shared secret: peers that do not present it are refused\n'
		printf 'NCCL_TESTS_MIN_BW\tfail the run (exit 1) when the average bus bandwidth is under 0.9 x this (GB/s)\n'
		;;
	sweep)
		printf 'SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT\t--run: this array task'"'"'s index and the tasks\n'
		printf 'OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID (and their sizes)\tunder mpirun or srun: this rank'"'"'s share of the points\n'
		;;
	fabscope)
		printf 'NCCL_TESTS_MIN_BW, SOURCE_DATE_EPOCH, RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, FABSCOPE_TOKEN, SLURM_*\tsee the pages of the commands that read them\n'
		;;
	esac
}

# split HELP-FILE into roff for each section: $tmp.{syn,desc,opt,ex,exit}.
# Prose is joined into paragraphs that man fills to the reader's width;
# an option is a tagged paragraph (.TP), its description joined from its
# continuation lines; indented blocks and examples stay as printed.
split_help() {
	awk -v base="$tmp" '
	function esc(t) {
		gsub(/\\/, "\\\\\\\\", t)
		if (t ~ /^[.'"'"']/)
			t = "\\&" t
		return t
	}
	function flush(    f) {
		if (para != "") {
			f = base "." (psect == "desc2" ? "desc" : psect)
			print ".PP" > f
			print esc(para) > f
		}
		if (opt != "") {
			f = base "." osect
			print ".TP" > f
			print ".B " esc(opt) > f
			print esc(optd) > f
		}
		para = opt = optd = ""
	}
	NR == 1 { sub(/^usage: /, ""); print esc($0) > (base ".syn"); sect = "syn"; next }
	sect == "syn" && /^ +fabscope / { sub(/^ +/, ""); print esc($0) > (base ".syn"); next }
	sect == "syn" { sect = "desc" }
	/^options/ { flush(); sect = "opt"; if ($0 !~ /^options:$/) { para = $0; psect = "opt" } next }
	/^examples?:/ { flush(); sect = "ex"; next }
	/^exit status:/ { flush(); sect = "exit"; sub(/^exit status: */, "") }
	sect == "exit" { if ($0 != "") { para = para == "" ? $0 : para " " $0; psect = "exit" } next }
	# prose after the examples or the options belongs to the description
	(sect == "ex" || sect == "opt") && /^[A-Z]/ { flush(); sect = "desc2" }
	/^$/ { flush(); next }
	sect == "ex" {  # a command: long ones continued with a backslash
		flush()
		line = $0
		sub(/^ +/, "", line)
		while (length(line) > 72) {
			cut = 72
			while (cut > 30 && substr(line, cut, 1) != " ")
				cut--
			if (cut <= 30)
				break
			print esc(substr(line, 1, cut)) "\\e" > (base ".ex")
			line = "    " substr(line, cut + 1)
		}
		print esc(line) > (base ".ex")
		next
	}
	# "  TERM  what it is" (an option, a command): a tagged paragraph
	(sect == "opt" && /^  ? ?-/) || (/^  [^ ]/ && index(substr($0, 3), "  ")) {
		flush()
		osect = sect == "desc2" ? "desc" : sect
		line = $0
		sub(/^ +/, "", line)
		j = index(line, "  ")
		if (j) {
			opt = substr(line, 1, j - 1)
			optd = substr(line, j)
			sub(/^ +/, "", optd)
		} else {
			opt = line
		}
		next
	}
	opt != "" && /^   / { line = $0; sub(/^ +/, "", line); optd = optd == "" ? line : optd " " line; next }
	/^ / {  # an indented block: as printed
		flush()
		f = base "." (sect == "desc2" ? "desc" : sect)
		print ".nf" > f
		print esc($0) > f
		print ".fi" > f
		next
	}
	{ if (opt != "") flush(); para = para == "" ? $0 : para " " $0; psect = sect }
	END { flush() }
	' "$1"
}

page() { # page NAME TITLE HELP-FILE ENV-KEY
	rm -f "$tmp.syn" "$tmp.desc" "$tmp.opt" "$tmp.ex" "$tmp.exit"
	: >"$tmp.syn"
	: >"$tmp.desc"
	: >"$tmp.opt"
	: >"$tmp.ex"
	: >"$tmp.exit"
	split_help "$3"
	{
		printf '.TH %s 1 "" "fabscope %s" "fabscope manual"\n' "$(echo "$1" | tr a-z A-Z)" "$ver"
		printf '.SH NAME\n%s \\- %s\n' "$1" "$2"
		printf '.SH SYNOPSIS\n.nf\n'
		cat "$tmp.syn"
		printf '.fi\n.SH DESCRIPTION\n'
		cat "$tmp.desc"
		if [ -s "$tmp.opt" ]; then
			printf '.SH OPTIONS\n'
			cat "$tmp.opt"
		fi
		env_of "$4" >"$tmp.env"
		if [ -s "$tmp.env" ]; then
			printf '.SH ENVIRONMENT\n'
			while IFS='	' read -r name what; do
				printf '.TP\n.B %s\n%s\n' "$name" "$what"
			done <"$tmp.env"
		fi
		if [ -s "$tmp.exit" ]; then
			printf '.SH EXIT STATUS\n'
			cat "$tmp.exit"
		fi
		if [ -s "$tmp.ex" ]; then
			printf '.SH EXAMPLES\n.nf\n'
			cat "$tmp.ex"
			printf '.fi\n'
		fi
		printf '.SH SEE ALSO\n'
		printf '%s\n' "$see" | sed "s/\(^\|, \)$1(1)//; s/^, //"
	} >"$out/$1.1"
}
tmp=$(mktemp)
"$F" --help >"$tmp.main"
# the commands and their one-line summaries, as fabscope --help lists them
cmds=$(awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' "$tmp.main")
see="fabscope(1)"
for c in $cmds; do see="$see, fabscope-$c(1)"; done
page fabscope "design, run, break, measure and diagnose the network of an AI training cluster" "$tmp.main" fabscope
for c in $cmds; do
	t=$(awk -v c="$c" '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && $1 == c { sub(/^ +/, ""); t = substr($0, index($0, "  ")); sub(/^ +/, "", t); print t }' "$tmp.main")
	"$F" "$c" --help >"$tmp.c"
	page "fabscope-$c" "$t" "$tmp.c" "$c"
done
rm -f "$tmp" "$tmp.main" "$tmp.c" "$tmp.syn" "$tmp.desc" "$tmp.opt" "$tmp.ex" "$tmp.exit" "$tmp.env"
