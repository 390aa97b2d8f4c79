#!/bin/sh
# The progress bar: drawn on stderr when it is a terminal and the work has
# lasted a second (keys, rate, and the percentage and ETA when the input's
# size is known; the phase after reading), redrawn with \r at most ten
# times a second, erased at the end and before an error message; never a
# byte of it when stderr is a pipe or a file, nor for work under a second.
#
# A pseudo-terminal (python3's pty module) stands in for the terminal. Work
# is made to last by stalling the command: its standard output is not read
# for a while (a file on stdin), or its standard input is written in two
# halves with a pause between them (a pipe on stdin).
#   progress.sh PATH_TO_AMQ SCRATCH_DIR
. "$(dirname "$0")/lib/common.sh"

cat >"$dir/pty_run.py" <<'EOF'
# pty_run.py tty|pipe STALL file|slow INPUT AMQ ARGS...: run AMQ ARGS with
# stderr on a pseudo-terminal (tty) or a pipe, stdin from INPUT (file) or
# fed from it in two halves STALL seconds apart (slow), stdout not read
# for the first STALL seconds; write stdout and stderr to out and err in
# the current directory, the seconds the command ran to elapsed, and exit
# with the command's status.
import os, pty, select, subprocess, sys, threading, time

mode, stall, feed, path = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
command = sys.argv[5:]
if mode == "tty":
    reader, writer = pty.openpty()
else:
    reader, writer = os.pipe()
stdin = open(path, "rb") if feed == "file" else subprocess.PIPE
started = time.monotonic()
proc = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=writer)
os.close(writer)

def feed_slowly():
    data = open(path, "rb").read()
    half = data.rfind(b"\n", 0, len(data) // 2) + 1
    proc.stdin.write(data[:half])
    proc.stdin.flush()
    time.sleep(stall)
    proc.stdin.write(data[half:])
    proc.stdin.close()

if feed == "slow":
    threading.Thread(target=feed_slowly).start()
else:
    time.sleep(stall)
out, err = b"", b""
streams = {proc.stdout.fileno(): "out", reader: "err"}
while streams:
    ready, _, _ = select.select(list(streams), [], [], 30)
    if not ready:
        break
    for fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:  # a pty's reader fails with EIO once the writer is gone
            data = b""
        if not data:
            del streams[fd]
        elif streams[fd] == "out":
            out += data
        else:
            err += data
status = proc.wait()
open("elapsed", "w").write("%.3f\n" % (time.monotonic() - started))
open("out", "wb").write(out)
open("err", "wb").write(err)
sys.exit(status)
EOF

# pty_run EXPECTED_EXIT tty|pipe STALL file|slow INPUT ARGS...
pty_run() {
    expected=$1 stderr_kind=$2 stall=$3 feed=$4 input=$5
    shift 5
    last="amq $* (stderr: $stderr_kind, input: $feed $input)"
    (cd "$dir" && /usr/bin/python3 "$dir/pty_run.py" "$stderr_kind" "$stall" "$feed" "$input" \
        "$amq" "$@")
    code=$?
    [ "$code" -eq "$expected" ] || fail "$last exited $code, expected $expected"
}

# The bar's redraws: each starts with \r and holds "keys/s".
draws() {
    tr '\r' '\n' <"$dir/err" | grep -c 'keys/s'
}

# ends_clean: the last bytes on stderr erase the bar.
ends_clean() {
    /usr/bin/python3 -c 'import sys; sys.exit(not open(sys.argv[1], "rb").read().endswith(b"\r\x1b[K"))' \
        "$dir/err" || fail "stderr of '$last' does not end by erasing the bar"
}

seq 1 300000 | sed 's/^/a-line-of-some-length-/' >"$dir/lines.txt"
seq 1 300000 | sed 's/^/key-/' >"$dir/keys.txt"
total=300000

# A regular file: keys, rate, percentage and ETA; all lines still printed.
pty_run 0 tty 1.5 file "$dir/lines.txt" dedup
lines out "$total"
expect err "amq dedup: " && expect err " keys, " && expect err "keys/s" && expect err "%, ETA " &&
    ends_clean
# At most ten a second over the time the command ran (which a slow build,
# under a sanitizer on a busy machine, can stretch well past the stall).
most=$(awk '{ printf "%d", 10 * $1 + 2 }' "$dir/elapsed")
[ "$(draws)" -le "$most" ] ||
    fail "$(draws) redraws in $(cat "$dir/elapsed") s: more than ten a second"

# The same on a pipe or a file: not a byte.
pty_run 0 pipe 1.5 file "$dir/lines.txt" dedup
lines out "$total" && empty err
"$amq" dedup "$dir/lines.txt" >"$dir/out" 2>"$dir/err" && empty err

# Quick work on a terminal: nothing either.
head -n 1000 "$dir/lines.txt" >"$dir/few.txt"
pty_run 0 tty 0 file "$dir/few.txt" dedup && lines out 1000 && empty err

# A pipe on stdin: the size is unknown, so no percentage; the phases after
# reading are named (a dynamic filter saved, a static one built).
pty_run 0 tty 1.5 slow "$dir/keys.txt" build -t bloom -n "$total" -o "$dir/b.amq"
expect err "amq build: " && expect err "keys/s" && expect err "; saving" && ends_clean
grep -q '%' "$dir/err" && fail "a percentage for an input of unknown size"
pty_run 0 tty 1.5 slow "$dir/keys.txt" build -t fuse8 -o "$dir/f.amq"
expect err "; building the filter" && ends_clean
run 0 query -c "$dir/f.amq" "$dir/keys.txt" && expect out "$total"

# add, remove and query draw it too.
pty_run 0 tty 1.5 slow "$dir/keys.txt" build -t counting-bloom -n "$total" -o "$dir/c.amq"
pty_run 0 tty 1.5 slow "$dir/keys.txt" remove "$dir/c.amq"
expect err "amq remove: " && expect err "keys/s" && ends_clean
pty_run 0 tty 1.5 slow "$dir/keys.txt" add "$dir/c.amq"
expect err "amq add: " && expect err "keys/s" && ends_clean
pty_run 0 tty 1.5 file "$dir/keys.txt" query "$dir/c.amq"
lines out "$total" && expect err "amq query: " && expect err "%, ETA " && ends_clean

# An error while the bar is up erases it first, so the message starts its
# own line.
seq 1 "$total" | awk '{ printf "%08x\n", $1 }' >"$dir/bad.txt"
echo "not-hex" >>"$dir/bad.txt"
pty_run 2 tty 1.5 slow "$dir/bad.txt" build --hex -t bloom -n "$total" -o "$dir/x.amq"
/usr/bin/python3 -c '
import sys
err = open(sys.argv[1], "rb").read()
at = err.find(b"amq: build: (standard input):300001: not a hex key")
sys.exit(not (at > 0 and err[:at].endswith(b"\r\x1b[K") and b"keys/s" in err[:at]))
' "$dir/err" || fail "the error did not erase the bar first: $(od -c "$dir/err" | tail -n 3)"

finish "cli progress"
