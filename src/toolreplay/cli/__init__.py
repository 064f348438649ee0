"""The command-line interface: one module per command (run, merge, report, diff, audit, record),
wired in cli.main.
"""
