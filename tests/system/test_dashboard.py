"""The dashboard (zeronf api, /) end to end in headless Chromium (Debian's,
driven by Selenium) against a running instance with traffic: the graph
shows the chain, the counters move, its buttons scale and stop NFs (the
manager confirms), and the event log shows what happened."""
from __future__ import annotations

import shutil

import pytest

from harness import NF_BIN, wait_for
from test_api import Api

pytestmark = pytest.mark.skipif(
    shutil.which("chromium") is None or shutil.which("chromedriver") is None,
    reason="no chromium / chromedriver")


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
              "--disable-gpu", "--window-size=1400,1000"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")),
                         options=opts)
    yield d
    d.quit()


def fresh(fn):
    """fn() on the page as it is now: the page redraws every second, so
    an element found a moment ago may be gone; None (wait_for tries
    again) when it is."""
    from selenium.common.exceptions import StaleElementReferenceException

    def attempt():
        try:
            return fn()
        except (StaleElementReferenceException, IndexError):
            return None
    return attempt


def test_dashboard_shows_and_drives_the_instance(managers, tmp_path,
                                                 browser):
    from selenium.webdriver.common.by import By
    m = managers(ports=["net_null0"], chain="1,2,port:0",
                 args=["--port-name", "0=wan"])
    m.call("nf.start", name="mon", binary=str(NF_BIN["monitor"]),
           service=1)
    m.call("nf.start", name="fw", binary=str(NF_BIN["forward"]), service=2,
           replicas=2)
    wait_for(lambda: len([n for n in m.call("nf.list")["nfs"]
                          if n["state"] == "running"]) == 3, 20, "NFs up")
    api = Api(m.name, tmp_path).wait()

    def click(sel, inner):
        def go():
            css(sel)[0].find_element(By.CSS_SELECTOR, inner).click()
            return True
        wait_for(fresh(go), 20, f"click {sel} {inner}")

    try:
        browser.get(api.url + f"/#token={api.token}")
        find = browser.find_elements

        def css(sel):
            return find(By.CSS_SELECTOR, sel)
        wait_for(fresh(lambda: css('[data-testid="instance"]')[0].text ==
                       m.name), 20, "instance shown")
        # The graph: ports in, then the chain's hops, with their NFs.
        wait_for(fresh(lambda: [g.get_attribute("data-hop") for g in
                                css('[data-testid="chain-hop"]')][1:] ==
                       ["svc:1", "svc:2", "port:0"]), 20, "chain drawn")
        hop2 = wait_for(fresh(lambda: [
            g.text for g in css('[data-testid="chain-hop"]')
            if g.get_attribute("data-hop") == "svc:2"][0]), 20, "svc:2")
        assert "fw" in hop2 and "fw.1" in hop2
        # Issue 29, item 13: the ports by name, with their rates.
        import re

        def rate(box, pattern):
            text = [g.text for g in css('[data-testid="chain-hop"]')
                    if g.get_attribute("data-hop") == box][0]
            got = re.search(pattern, text)
            return int(got.group(1)) if got else 0
        wait_for(fresh(lambda: rate("in", r"wan: (\d+)/s") > 0), 20,
                 "the port's name and RX rate in the in box")
        wait_for(fresh(lambda: rate("port:0", r"out: (\d+)/s") > 0), 20,
                 "the port's TX rate in its box")
        wait_for(fresh(lambda: "wan" in [
            g.text for g in css('[data-testid="chain-hop"]')
            if g.get_attribute("data-hop") == "port:0"][0]), 20,
            "the port's name in its box")

        def rx_of(name):
            return int(css(f'[data-testid="nf"][data-name="{name}"]')[0]
                       .find_element(By.CSS_SELECTOR,
                                     '[data-testid="nf-rx"]').text)
        first = wait_for(fresh(lambda: rx_of("mon")), 20, "mon row")
        wait_for(fresh(lambda: rx_of("mon") > first), 20, "counters move")
        legend = wait_for(fresh(lambda: css('[data-testid="legend"]')[0]
                                .text), 20, "legend")
        assert "mon" in legend and "fw.1" in legend
        # Scale fw up from the page: the manager runs a third replica.
        click('[data-testid="launched-nf"][data-name="fw"]',
              '[data-testid="scale-up"]')
        wait_for(lambda: len([n for n in m.call("nf.list")["nfs"]
                              if n["name"].startswith("fw") and
                              n["state"] == "running"]) == 3, 20,
                 "fw scaled to 3")
        # Stop the monitor from its row: gone from the manager.
        click('[data-testid="nf"][data-name="mon"]',
              '[data-testid="nf-stop"]')
        wait_for(lambda: all(n["name"] != "mon" for n in
                             m.call("nf.list")["nfs"]), 20, "mon stopped")
        wait_for(lambda: not css('[data-testid="nf"][data-name="mon"]'),
                 20, "mon off the page")
        wait_for(fresh(lambda: {"nf.scale", "nf.left"} <= {
            e.get_attribute("data-type")
            for e in css('[data-testid="event"]')}), 20, "events shown")
        assert wait_for(fresh(lambda: (not css('[data-testid="error"]')[0]
                                       .is_displayed(),)), 20,
                        "the error line")[0]
    finally:
        api.close()


def test_a_page_without_its_token_asks_once(managers, tmp_path, browser):
    """Issue 29, item 6: off loopback a 401 opened prompt(), and cancel
    brought it back (25 prompts in 6 s). The page shows a login form
    once, calls nothing until it is filled in, says when a token was
    refused, and runs with the right one."""
    from selenium.webdriver.common.by import By
    m = managers(ports=["net_null0"])
    api = Api(m.name, tmp_path).wait()
    try:
        browser.get(api.url + "/")
        css = lambda sel: browser.find_elements(By.CSS_SELECTOR, sel)  # noqa
        form = wait_for(lambda: [f for f in css('[data-testid="login"]')
                                 if f.is_displayed()], 20, "login form")
        assert form
        browser.execute_script(
            "window.calls = 0; const f = window.fetch;"
            "window.fetch = (...a) => { window.calls++; return f(...a); };")
        import time
        time.sleep(3)  # three refreshes' time: none may call
        assert browser.execute_script("return window.calls") == 0
        css('[data-testid="login-token"]')[0].send_keys("wrong" * 4)
        css('[data-testid="login-submit"]')[0].click()
        wait_for(lambda: "refused" in
                 css('[data-testid="login-error"]')[0].text, 20,
                 "a refused token said")
        calls = browser.execute_script("return window.calls")
        time.sleep(2)
        assert browser.execute_script("return window.calls") == calls
        css('[data-testid="login-token"]')[0].send_keys(api.token)
        css('[data-testid="login-submit"]')[0].click()
        wait_for(fresh(lambda: css('[data-testid="instance"]')[0].text ==
                       m.name), 20, "signed in")
        assert wait_for(fresh(lambda: (not css('[data-testid="login"]')[0]
                                       .is_displayed(),)), 20,
                        "the login form")[0]
    finally:
        api.close()
