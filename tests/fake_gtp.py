"""A fake GTP opponent that fails on demand at ``genmove``, for the tests of ``GTP_Client.py`` and match runners.

    python tests/fake_gtp.py --fail {none,crash,hang,illegal,offboard,malformed,error,closeout}
        [--unknown COMMAND ...] [--log FILE]

Every command but ``genmove`` and ``quit`` answers ``=`` with an empty text. ``genmove`` answers ``pass``
(``none``), exits without a reply (``crash``), never answers (``hang``), answers the first point played so
far, which is occupied (``illegal``), answers ``Z99`` (``offboard``), a line without ``=`` (``malformed``)
or ``? cannot`` (``error``), or closes its output and runs on (``closeout``). The ``--unknown`` commands answer
``? unknown command``, as an engine without them does; ``--log`` appends every command line to FILE.
"""

import argparse
import os
import sys
import time

FAILURES = ("none", "crash", "hang", "illegal", "offboard", "malformed", "error", "closeout")


def genmove_reply(fail: str, played: list[str]) -> str:
    """The raw reply to ``genmove`` under ``fail`` (the process exits or sleeps for crash and hang)."""
    if fail == "crash":
        sys.exit(3)
    if fail == "closeout":
        sys.stdout.flush()
        os.close(1)
    if fail in ("hang", "closeout"):
        time.sleep(3600)
    return {
        "illegal": f"= {played[0] if played else 'A1'}",
        "offboard": "= Z99",
        "malformed": "I think I will play somewhere",
        "error": "? cannot",
    }.get(fail, "= pass")


def main() -> None:
    parser = argparse.ArgumentParser(description="A GTP opponent that fails on demand at genmove.")
    parser.add_argument("--fail", choices=FAILURES, default="none")
    parser.add_argument("--unknown", nargs="*", default=[], help="commands answered '? unknown command'")
    parser.add_argument("--log", help="append every command line to this file")
    args = parser.parse_args()
    fail = args.fail
    played: list[str] = []
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if args.log:
            with open(args.log, "a") as log:
                log.write(line)
        if words[0] in args.unknown:
            print("? unknown command\n", flush=True)
            continue
        if words[0] == "quit":
            print("=\n", flush=True)
            return
        if words[0] == "play" and len(words) == 3:
            played.append(words[2])
        reply = genmove_reply(fail, played) if words[0] == "genmove" else "="
        print(reply + "\n", flush=True)


if __name__ == "__main__":
    main()
