import sys

from checker.run import client  # the standard library only: a warm server answers before torch is imported

argv = sys.argv[1:]
if argv[:1] == ["lab"]:  # JupyterLab for the puzzles (checker/lab.py), not a check
    from checker.lab import main as lab
    sys.exit(lab(argv[1:]))
try:
    status = client.main(argv)
except BrokenPipeError:  # the reader of a warm server's answer went away (`| head`): stop quietly
    client.quiet_stdout()
    sys.exit(client.EXIT_PIPE)
if status is None:  # no server ran it: here, as always, then a warm server for the next command
    from checker.cli import main
    status = main(argv)
    if not client.disabled(argv) and client.worth_a_server(argv, status):
        client.start_server()
sys.exit(status)
