# Copyright (c) rdma.fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ibsim with its console, for fault injection (Unlink, ReLink, PerformanceSet); see ../shared/docs/ibsim-facts.md §7.

ConsoleFabric is ibsim_fabric.Fabric with ibsim started without -n: its console reads
commands from a pipe the test holds open. console() writes one command and waits, with a
bound, for ibsim's own answer ("... has been set to 50") or its next prompt. Every wait has a
bound; ibsim and the OpenSMs are still killed by the base class's timers and close().
"""

from __future__ import annotations

import time

import ibsim_fabric


class ConsoleFabric(ibsim_fabric.Fabric):
    """One ibsim whose console the test drives, and the OpenSMs and commands run against it."""

    def start(self, timeout: float = 10, console: bool = True) -> "ConsoleFabric":
        return super().start(timeout, console)

    def console(self, command: str, answer: str = "", timeout: float = 5) -> str:
        """Send one console command; wait until ibsim prints answer (or, without one, its next prompt) after it."""
        proc = self.processes["ibsim"][0]
        assert proc.poll() is None, f"ibsim exited (rc {proc.returncode}): {self.output('ibsim')[-2000:]}"
        before = len(self.output("ibsim"))
        proc.stdin.write((command + "\n").encode())
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            new = self.output("ibsim")[before:]
            if (answer and answer in new) or (not answer and "sim>" in new):
                return new
            if time.monotonic() > deadline:
                raise AssertionError(f"ibsim did not answer {command!r} with {answer or 'a prompt'!r} in {timeout} s: {new[-1000:]!r}")
            time.sleep(0.05)

    def wait_for(self, host: str, argv: list, text: str, timeout: float = 15) -> str:
        """Run argv from host until its output contains text; the last output."""
        deadline = time.monotonic() + timeout
        while True:
            proc = self.run(host, *argv)
            output = proc.stdout + proc.stderr
            if text in output:
                return output
            if time.monotonic() > deadline:
                raise AssertionError(f"{' '.join(argv)} on {host} did not show {text!r} in {timeout} s: {output[-1000:]!r}")
            time.sleep(0.2)

    def close(self) -> None:
        proc = self.processes.get("ibsim", (None, None))[0]
        if proc is not None and proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
        super().close()
