"""Runs a command with stderr on a pseudo-terminal (200 columns) and stdout on a pipe; prints
one JSON object: {"status", "stdout", "stderr"} (stderr as the terminal received it).
tests/cli_progress.rs uses it to see what a user at a terminal sees."""
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import threading

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
stdout = []
reader = threading.Thread(target=lambda: stdout.append(child.stdout.read()))
reader.start()
stderr = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: every writer of the terminal has closed it
        break
    if not chunk:
        break
    stderr += chunk
status = child.wait()
reader.join()
print(json.dumps({"status": status, "stdout": stdout[0].decode(), "stderr": stderr.decode(errors="replace")}))
