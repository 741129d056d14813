"""A TCP proxy that delays every reply: a server made `delay` seconds away, on loopback.

Bytes from the client go to the target at once; bytes back are held `delay`
seconds (each chunk keeps its order and its own deadline, so the link is slow,
not narrow). `delay` can change while connections are open. The proxy runs its
own event loop on a daemon thread, so it keeps its pace whatever the test's
loop or the server under test does.
"""

import asyncio
import contextlib
import threading
import time
from types import TracebackType
from typing import Self

LOOPBACK = "127.0.0.1"


class DelayProxy:
    """`with DelayProxy(port) as proxy:` forwards 127.0.0.1:`proxy.port` to `port`."""

    def __init__(self, target_port: int, delay: float = 0.0) -> None:
        self.target_port = target_port
        self.delay = delay
        self.port = 0
        self.replies = 0
        """Chunks the target sent back so far."""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="DelayProxy", daemon=True)
        self._server: asyncio.Server | None = None

    def __enter__(self) -> Self:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the delay proxy did not start")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._connect, LOOPBACK, 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        self._server.close()
        tasks = asyncio.all_tasks(self._loop)
        for task in tasks:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        self._loop.close()

    async def _connect(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        try:
            target_in, target_out = await asyncio.open_connection(LOOPBACK, self.target_port)
        except OSError:
            client_out.close()
            return
        held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def upstream() -> None:
            while data := await client_in.read(65536):
                target_out.write(data)
                await target_out.drain()

        async def hold() -> None:
            while data := await target_in.read(65536):
                self.replies += 1
                held.put_nowait((time.monotonic() + self.delay, data))
            held.put_nowait((0.0, b""))

        async def downstream() -> None:
            while True:
                due, data = await held.get()
                if not data:
                    return
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                client_out.write(data)
                await client_out.drain()

        tasks = [asyncio.ensure_future(job()) for job in (upstream, hold, downstream)]
        with contextlib.suppress(Exception, asyncio.CancelledError):  # the proxy stopping
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for writer in (client_out, target_out):
            writer.close()
