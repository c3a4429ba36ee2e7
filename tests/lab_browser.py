"""A real JupyterLab server and a real Chromium (Debian's chromium + chromedriver, driven by the
pinned selenium) for tests/test_browser_lab.py. Nothing is installed here: ``make browser-test``
(scripts/setup_browser.sh) installs the browser, ``make`` the Python packages.

:class:`LabServer` starts ``python -m jupyterlab`` on 127.0.0.1 with a token, in its own Jupyter
config/data/runtime folders (so a user's kernels and settings play no part: the kernel is this
environment's ``python3``) and with notebook windowing off (every cell stays in the DOM).
:class:`LabPage` opens a notebook, runs it from the menu, and reads outputs the way a person sees
them; :meth:`LabPage.shot` saves a screenshot per step. No failure message shows the server's
token (:func:`redact_token`): JupyterLab's log prints its URL with ``?token=…``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from isolated_root import CHECKOUT
from local_servers import free_port, stop_process

#: where the browser test's screenshots go: the checkout's screenshots/browser/ (git-ignored), where
#: `make browser-test` says to look (the test root is removed after a session that passed)
SCREENSHOTS = CHECKOUT / "screenshots" / "browser"


#: `make test` installs chromium and chromedriver when missing (scripts/setup_browser.sh --optional)
#: and skips the browser test where they could not be installed; `make browser-test` and .ci/run set
#: INFERQA_REQUIRE_BROWSER=1, so a missing browser fails there instead of skipping
HAVE_BROWSER = bool(
    (shutil.which("chromium") or shutil.which("chromium-browser")) and shutil.which("chromedriver")
)
#: the marks of every real-browser test module (``pytestmark = BROWSER_TEST_MARKS``)
BROWSER_TEST_MARKS = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not HAVE_BROWSER and os.environ.get("INFERQA_REQUIRE_BROWSER") != "1",
        reason="chromium and chromedriver are not on PATH: `make test` installs them when it can "
        "(scripts/setup_browser.sh: apt-get, as root or with password-less sudo); `make browser-test` "
        "installs them, asking sudo for a password, and runs the test; INFERQA_REQUIRE_BROWSER=1 fails "
        "instead of skipping",
    ),
]


_TOKEN_PARAM = re.compile(r"(?i)(\btoken=)[^\s&#'\"]+")


def redact_token(text: str, token: str | None = None) -> str:
    """``text`` with every ``token=…`` URL parameter blanked, and ``token`` itself wherever it
    occurs (an ``Authorization`` header, a command line): for failure messages and logs."""
    out = _TOKEN_PARAM.sub(r"\1***", str(text))
    return out.replace(token, "***") if token else out


def browser_binaries() -> tuple[str, str]:
    """Paths of chromium and chromedriver, or an AssertionError saying how to install them."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert chromium and driver, ("the browser test needs Debian's chromium and chromium-driver: run "
                                 "scripts/setup_browser.sh (make browser-test does)")
    return chromium, driver


class LabServer:
    """``python -m jupyterlab`` serving ``root_dir`` on 127.0.0.1 with a random token."""

    def __init__(self, root_dir: Path, work: Path, env: dict[str, str] | None = None) -> None:
        self.root_dir, self.work = root_dir, work
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.extra_env = env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = work / "jupyterlab.log"

    @property
    def url(self) -> str:
        """The server's address, without the token (safe to print)."""
        return f"http://127.0.0.1:{self.port}"

    def authorised_url(self, path: str) -> str:
        """``url/path`` with the token: for the browser only, never for a message."""
        return f"{self.url}/{path}?token={self.token}"

    def log_tail(self, chars: int = 3000) -> str:
        """The end of JupyterLab's log, token redacted."""
        return redact_token(self.log.read_text(errors="replace")[-chars:], self.token)

    def start(self, timeout: float = 300) -> LabServer:
        settings = self.work / "lab-settings"
        for plugin, values in {
            "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        }.items():
            f = settings / f"{plugin}.jupyterlab-settings"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(values), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "INFERQA_PROFILE"}  # papermill mode hides widgets
        env.update({
            "JUPYTER_CONFIG_DIR": str(self.work / "jupyter-config"),
            "JUPYTER_DATA_DIR": str(self.work / "jupyter-data"),
            "JUPYTER_RUNTIME_DIR": str(self.work / "jupyter-runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.work / "lab-workspaces"),
            "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
            **self.extra_env,
        })
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root_dir}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
            cmd.append("--allow-root")
        with open(self.log, "wb") as log:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise AssertionError(f"JupyterLab exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                req = urllib.request.Request(
                    f"{self.url}/api/status", headers={"Authorization": f"token {self.token}"}
                )
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(1)
        raise AssertionError(f"JupyterLab did not answer within {timeout} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, grace=60)  # JupyterLab shuts its kernels down on SIGTERM


def chrome(width: int = 1500, height: int = 1300):
    """A headless Chromium driven through Debian's chromedriver (no driver download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = browser_binaries()
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)


class LabPage:
    """One notebook open in JupyterLab in ``driver``; screenshots go to ``shots`` (one per step)."""

    def __init__(
        self, driver: Any, server: LabServer, shots: Path, log: Callable[[str], None] = print
    ) -> None:
        self.d, self.server, self.shots, self.log = driver, server, shots, log
        shots.mkdir(parents=True, exist_ok=True)
        self.taken: list[Path] = []

    # -- waiting ----------------------------------------------------------------------------
    def wait(self, what: str, cond: Callable[[], Any], timeout: float, every: float = 0.5) -> Any:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                got = cond()
            except Exception:  # a DOM node replaced while reading it: try again
                got = None
            if got:
                return got
            time.sleep(every)
        self.shot(f"timeout-{what.replace(' ', '_')[:40]}")
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")

    def js(self, script: str, *args: Any) -> Any:
        return self.d.execute_script(script, *args)

    # -- notebook ---------------------------------------------------------------------------
    def _navigate(self, path: str) -> str | None:
        """Load ``path`` of the lab with the token; the browser's error (token redacted) or None.
        The tokenised URL and the driver's exception stay inside this frame."""
        try:
            self.d.get(self.server.authorised_url(path))
        except Exception as e:  # selenium's message may quote the URL
            return f"{type(e).__name__}: {redact_token(str(e), self.server.token)}"
        return None

    def open(self, name: str, timeout: float = 300) -> None:
        error = self._navigate(f"lab/tree/{name}")
        if error is not None:
            raise AssertionError(f"cannot open {self.server.url}/lab/tree/{name}: {error}")
        self.wait(
            "the notebook's cells",
            lambda: (
                self.js(
                    "return document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                    ".jp-Cell').length"
                )
                > 1
            ),
            timeout,
        )
        # the status bar names the kernel once it is connected ("Python 3 (inferqa) | Idle")
        self.wait("an idle kernel", lambda: self.kernel_status() == "idle" and self.js(
            "const t = document.querySelector('#jp-main-statusbar').innerText; "
            "return t.includes('| Idle') && !t.includes('No Kernel');"), timeout)

    def kernel_status(self) -> str | None:
        return self.js("const e = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
                       ".jp-Notebook-ExecutionIndicator'); return e ? e.getAttribute('data-status') : null;")

    def menu(self, top: str, label: str) -> None:
        """Click menu ``top`` (e.g. "Run"), then its item ``label`` (e.g. "Run All Cells"), as a person
        does."""
        from selenium.webdriver.common.by import By

        for item in self.d.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item"):
            if item.text.strip() == top:
                item.click()
                break
        else:
            raise AssertionError(f"no menu {top!r}")

        def entry() -> Any:
            for e in self.d.find_elements(By.CSS_SELECTOR, ".lm-Menu-content > .lm-Menu-item"):
                if e.find_element(By.CSS_SELECTOR, ".lm-Menu-itemLabel").text.strip() == label:
                    return e
            return None

        self.wait(f"menu item {top} > {label}", entry, 30).click()

    def prompts(self) -> list[str]:
        return self.js(
            "return [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell "
            ".jp-InputArea-prompt')].map(e => e.textContent.trim())"
        )

    def run_all(self, timeout: float) -> float:
        """Run > Run All Cells, wait until every code cell has an execution count and the kernel is
        idle; returns the seconds it took."""
        t0 = time.monotonic()
        self.menu("Run", "Run All Cells")
        self.wait("the cells to start", lambda: any("*" in p for p in self.prompts()) or all(
            p.strip("[]: ").isdigit() for p in self.prompts()), 60, every=0.2)
        self.wait("every cell to run", lambda: all(p.strip("[]: ").isdigit() for p in self.prompts())
                  and self.kernel_status() == "idle", timeout, every=1.0)
        return time.monotonic() - t0

    def save(self, path: Path, timeout: float = 60) -> dict[str, Any]:
        """File > Save Notebook; returns the saved notebook (JSON) once its outputs are on disk."""
        before = path.stat().st_mtime
        self.menu("File", "Save Notebook")
        self.wait("the notebook to be saved", lambda: path.stat().st_mtime > before, timeout)
        return json.loads(path.read_text(encoding="utf-8"))

    def error_outputs(self) -> list[str]:
        """Text of every output showing a traceback (error outputs render as stderr in JupyterLab),
        token redacted."""
        outs = self.js("return [...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText)"
                       ".filter(t => /Traceback|Error:|Exception:/.test(t))")
        return [redact_token(t, self.server.token) for t in outs]

    def text_of(self, css: str) -> str:
        """The visible text of the first element matching ``css`` ('' when none), token redacted
        (the text goes into assertion messages)."""
        text = self.js("const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", css)
        return redact_token(text, self.server.token)

    def notebook_text(self) -> str:
        """The visible text of the open notebook, token redacted."""
        return self.text_of(".jp-NotebookPanel:not(.lm-mod-hidden)")

    def select(self, css: str, label_prefix: str) -> str:
        """Choose the option of ``<select>`` ``css`` whose text starts with ``label_prefix`` (as a click
        does)."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        el = self.d.find_element(By.CSS_SELECTOR, css)
        self.scroll_to(css)
        sel = Select(el)
        label = next(o.text for o in sel.options if o.text.startswith(label_prefix))
        sel.select_by_visible_text(label)
        return label

    def scroll_to(self, css: str) -> None:
        self.js(
            "const e = document.querySelector(arguments[0]); if (e) e.scrollIntoView({block: 'start'});", css
        )
        time.sleep(0.5)

    def shot_text(self, name: str, text: str) -> Path:
        """Screenshot with the first paragraph, heading or text output holding ``text`` scrolled to the
        top of the window."""
        self.js(
            "const e = [...document.querySelectorAll('.jp-OutputArea-output p, .jp-OutputArea-output pre, "
            ".jp-OutputArea-output h4')].find(o => o.innerText.includes(arguments[0])); "
            "if (e) e.scrollIntoView({block: 'start'});",
            text,
        )
        time.sleep(0.5)
        return self.shot(name)

    def shot(self, name: str, css: str | None = None) -> Path:
        """Screenshot of the window (after scrolling ``css`` to the top) as ``NN_<name>.png``."""
        if css:
            self.scroll_to(css)
        path = (
            self.shots / f"{len(list(self.shots.glob('*.png'))) + 1:02d}_{name}.png"
        )  # numbered across tests
        self.d.save_screenshot(str(path))
        self.taken.append(path)
        self.log(f"[browser] screenshot {path}")
        return path
