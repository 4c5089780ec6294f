"""Load a page in headless Chromium (Debian's ``chromium``) as a person would, and report what
happened: how long until its plots were drawn, what the console said, which requests it
made, what the DOM holds; a screenshot on request.

It speaks the DevTools protocol over ``--remote-debugging-pipe`` (NUL-separated JSON on file
descriptors 3 and 4): no port, no websocket library. The flags keep Chromium off the
network: the page's own requests are the only ones, and they are recorded.
"""
import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

CHROMIUM = os.environ.get('SSB_CHROMIUM', '/usr/bin/chromium')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--remote-debugging-pipe', '--hide-scrollbars', 'about:blank']

# Run in every page from its start: the page's clock (ms since navigation) when Bokeh's
# document has rendered every view (BokehJS's own signal), checked every 10 ms in the page;
# and, evaluated after, the elements inside the shadow roots Bokeh draws into, by tag.
WATCH = """(() => {
  const check = () => {
    if (window.Bokeh !== undefined && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle)
      window.ssbDrawn = performance.now()
    else
      setTimeout(check, 10)
  }
  check()
})()"""
DEEP = '''(() => {
  const count = {}, texts = []
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      count[el.tagName] = (count[el.tagName] || 0) + 1
      if (el.tagName === 'OPTION') texts.push(el.textContent)
      if (el.tagName === 'IMG') texts.push('IMG ' + el.getAttribute('src'))
      if (el.shadowRoot) walk(el.shadowRoot)
    }
  }
  walk(document)
  return {count, texts, body: document.body.innerText}
})()'''


# Scroll the figure titled TITLE into view: where point INDEX of its first scatter (else
# line) is on the screen.
POINT = """(() => {
  const views = []
  const walk = (view) => { views.push(view); for (const c of view.child_views ?? []) walk(c) }
  Object.values(Bokeh.index).forEach(walk)
  const plot = views.find((v) => v.model.constructor.__name__ === 'Figure'
                                 && v.model.title.text === TITLE)
  const glyph = (r) => r.glyph.constructor.__name__
  const dots = plot.model.renderers.find((r) => glyph(r) === 'Scatter')
               ?? plot.model.renderers.find((r) => glyph(r) === 'Line')
  const data = dots.data_source.data
  plot.el.scrollIntoView()
  const box = plot.canvas_view.el.getBoundingClientRect()
  return {x: box.left + plot.frame.x_scale.compute(data.x[INDEX]),
          y: box.top + plot.frame.y_scale.compute(data.y[INDEX])}
})()"""
# The text of Bokeh's tooltips, inside its shadow roots.
TOOLTIPS = """(() => {
  const texts = []
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot)
      if (el.classList.contains('bk-tooltip-content')) texts.push(el.innerText)
    }
  }
  walk(document)
  return texts
})()"""


class BrowserError(Exception):
    pass


@dataclass
class Load:
    seconds: float = None                               # navigation to plots drawn
    cpu: float = None                                   # CPU seconds of the renderers then
    errors: list = field(default_factory=list)          # console errors, exceptions
    messages: list = field(default_factory=list)        # every console message
    requests: list = field(default_factory=list)        # URLs the page asked for
    dialogs: list = field(default_factory=list)         # alert(), confirm(), ...
    elements: dict = field(default_factory=dict)        # tag -> count, shadow roots included
    texts: list = field(default_factory=list)           # <option> texts, <img> sources
    body: str = ''                                      # the page's visible text
    session: str = ''                                   # for Chromium.evaluate


class Chromium:
    """One headless Chromium with a fresh profile, driven over the DevTools pipe."""

    def __init__(self, width=1280, height=1000):
        if not os.access(CHROMIUM, os.X_OK):
            raise BrowserError(f'no {CHROMIUM}: apt-get install chromium')
        self.profile = tempfile.mkdtemp(prefix='ssb-chromium-')
        to_browser, self._in = os.pipe()
        self._out, from_browser = os.pipe()

        def pipes():                    # the child's fds 3 and 4, as Chromium expects
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
            for fd, high_fd in zip((3, 4), high):     # (either pipe may already be 3 or 4)
                os.dup2(high_fd, fd)
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS[:-1], f'--user-data-dir={self.profile}',
             f'--window-size={width},{height}', FLAGS[-1]],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=pipes, close_fds=False)
        os.close(to_browser)
        os.close(from_browser)
        self.width, self.height = width, height
        self.events, self.replies, self.next_id = queue.Queue(), {}, 0
        self.lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buffer = b''
        while True:
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                with self.lock:
                    self.replies[None] = None            # the browser went away
                    self.lock.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b'\0')
            for raw in messages:
                message = json.loads(raw)
                if 'id' in message:
                    with self.lock:
                        self.replies[message['id']] = message
                        self.lock.notify_all()
                else:
                    self.events.put(message)

    def send(self, method, session=None, timeout=30, **params):
        with self.lock:
            self.next_id += 1
            ident = self.next_id
        message = {'id': ident, 'method': method, 'params': params}
        if session:
            message['sessionId'] = session
        os.write(self._in, json.dumps(message).encode() + b'\0')
        with self.lock:
            if not self.lock.wait_for(lambda: ident in self.replies or None in self.replies,
                                      timeout):
                raise BrowserError(f'no answer to {method} in {timeout} s')
            reply = self.replies.pop(ident, None)
        if reply is None:
            raise BrowserError(f'Chromium exited during {method}')
        if 'error' in reply:
            raise BrowserError(f'{method}: {reply["error"].get("message")}')
        return reply.get('result', {})

    def open_page(self):
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        for domain in ('Runtime', 'Log', 'Page', 'Network'):
            self.send(f'{domain}.enable', session)
        self.send('Page.addScriptToEvaluateOnNewDocument', session, source=WATCH)
        self.send('Emulation.setDeviceMetricsOverride', session, width=self.width,
                  height=self.height, deviceScaleFactor=1, mobile=False)
        return session

    def renderer_cpu(self):
        """CPU seconds the renderer processes used so far (a page's work, whatever else
        runs on the machine: on a shared one its wall time stretches)."""
        processes = self.send('SystemInfo.getProcessInfo')['processInfo']
        return sum(p['cpuTime'] for p in processes if p['type'] == 'renderer')

    def evaluate(self, session, expression, timeout=30):
        result = self.send('Runtime.evaluate', session, timeout=timeout, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in result:
            raise BrowserError(f'{expression[:60]}: {result["exceptionDetails"]}')
        return result['result'].get('value')

    def _drain(self, session, load):
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event.get('sessionId') != session:
                continue
            method, params = event['method'], event.get('params', {})
            if method == 'Runtime.consoleAPICalled':
                text = ' '.join(str(a.get('value', a.get('description', '')))
                                for a in params.get('args', []))
                load.messages.append(f'{params["type"]}: {text}')
                if params['type'] in ('error', 'assert'):
                    load.errors.append(text)
            elif method == 'Runtime.exceptionThrown':
                details = params['exceptionDetails']
                load.errors.append(details.get('exception', {}).get('description')
                                   or details.get('text'))
            elif method == 'Log.entryAdded' and params['entry']['level'] == 'error':
                load.errors.append(params['entry']['text'])
            elif method == 'Network.requestWillBeSent':
                load.requests.append(params['request']['url'])
            elif method == 'Page.javascriptDialogOpening':
                load.dialogs.append(params.get('message'))
                self.send('Page.handleJavaScriptDialog', session, accept=True)

    def load(self, path, timeout=60, screenshot=None):
        """Open ``path``, wait until its plots are drawn (BrowserError after ``timeout``
        seconds), and report; ``screenshot``: a PNG file of the page's top to write."""
        session = self.open_page()
        load = Load(session=session)
        cpu = self.renderer_cpu()
        self.send('Page.navigate', session, url='file://' + os.path.abspath(path))
        deadline = time.monotonic() + timeout
        while True:
            drawn = self.evaluate(session, 'location.protocol === "file:" && window.ssbDrawn')
            if drawn:
                load.seconds = drawn / 1000
                load.cpu = self.renderer_cpu() - cpu
                break
            if time.monotonic() > deadline:
                self._drain(session, load)
                raise BrowserError(f'{path}: plots not drawn after {timeout} s; console: '
                                   f'{load.messages[-5:]}')
            time.sleep(0.05)
        time.sleep(0.2)                 # late console messages
        self._drain(session, load)
        found = self.evaluate(session, DEEP)
        load.elements, load.texts, load.body = found['count'], found['texts'], found['body']
        if screenshot:
            shot = self.send('Page.captureScreenshot', session, format='png')
            with open(screenshot, 'wb') as f:
                f.write(base64.b64decode(shot['data']))
        return load

    def hover(self, load, title, index):
        """Move the mouse over point ``index`` of the figure titled ``title``; the text of
        every tooltip then shown."""
        where = self.evaluate(load.session, POINT.replace('TITLE', json.dumps(title))
                              .replace('INDEX', str(int(index))))
        time.sleep(0.3)                  # the scroll settles
        self.send('Input.dispatchMouseEvent', load.session, type='mouseMoved', x=where['x'],
                  y=where['y'])
        deadline = time.monotonic() + 10
        while not (tips := self.evaluate(load.session, TOOLTIPS)):
            if time.monotonic() > deadline:
                raise BrowserError(f'no tooltip over point {index} of {title!r}')
            time.sleep(0.05)
        return tips

    def close(self):
        try:
            self.send('Browser.close', timeout=5)
        except BrowserError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._in)
        os.close(self._out)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
