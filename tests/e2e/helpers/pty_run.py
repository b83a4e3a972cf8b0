#!/usr/bin/env python3
"""pty_run.py COLS [AT NEW_COLS] -- CMD...: runs CMD with its stdin, stdout
and stderr on a pseudo-terminal COLS columns wide (AT seconds in, NEW_COLS
wide and a SIGWINCH, as a terminal being resized); writes what the terminal
received to stdout and exits with CMD's exit code. For test_progress.sh."""
import fcntl, os, pty, select, signal, struct, sys, termios, time

args = sys.argv[1:]
sep = args.index("--")
opts, cmd = args[:sep], args[sep + 1:]
resize = (float(opts[1]), int(opts[2])) if len(opts) > 2 else None


def set_cols(fd, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))


pid, fd = pty.fork()
if pid == 0:
    set_cols(0, int(opts[0]))
    os.execvp(cmd[0], cmd)
set_cols(fd, int(opts[0]))
out, start = b"", time.time()
while True:
    if resize and time.time() - start >= resize[0]:
        set_cols(fd, resize[1])
        os.kill(pid, signal.SIGWINCH)
        resize = None
    if not select.select([fd], [], [], 0.05)[0]:
        continue
    try:
        data = os.read(fd, 65536)
    except OSError:  # EIO: the child closed the terminal
        break
    if not data:
        break
    out += data
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
