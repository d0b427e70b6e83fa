"""The Python kit's own tests: the proxy-chain protocol line by line (the router, sans I/O),
the framing under every chunking, writes that take part of their bytes, and a whole proxy
served over pipes. Run: `python3 -m unittest discover -s kits/python/tests`."""

from __future__ import annotations

import json
import os
import sys
import threading
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_proxy_kit import DROP, Fail, Forward, Proxy, Respond, Router, Tool, ToolError, serve  # noqa: E402
from acp_proxy_kit import codec  # noqa: E402
from acp_proxy_kit.framing import LineSplitter, write_all  # noqa: E402


def line(message: dict) -> bytes:
    return json.dumps(message).encode()


def outputs(router: Router) -> list[dict]:
    return [json.loads(text) for text in router.take_output().decode().splitlines()]


def request(id, method, params=None) -> bytes:
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def wrapped(id, method, params) -> bytes:
    message = {"jsonrpc": "2.0", "method": "proxy/successor", "params": {"method": method, "params": params}}
    if id is not None:
        message["id"] = id
    return line(message)


def result(id, value) -> bytes:
    return line({"jsonrpc": "2.0", "id": id, "result": value})


class Initialized:
    """A router past the handshake; `ours` is the next id the kit will choose."""

    def __init__(self, proxy: Proxy) -> None:
        self.router = Router(proxy)
        self.router.on_line(request(0, "proxy/initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}))
        self.router.on_line(result(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}))
        self.router.take_output()


class Handshake(unittest.TestCase):
    def test_proxy_initialize_goes_on_as_successor_initialize_and_the_answer_comes_back(self):
        router = Router(Proxy())
        router.on_line(request("init", "proxy/initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}))
        self.assertEqual(outputs(router), [{"jsonrpc": "2.0", "id": 0, "method": "proxy/successor",
                                            "params": {"method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}}}])
        router.on_line(result(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}))
        self.assertEqual(outputs(router), [{"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}}])
        self.assertEqual(router.peers.client_capabilities, {"terminal": True})
        self.assertEqual(router.peers.agent_capabilities, {"loadSession": True})

    def test_the_underscore_dialect_is_answered_in_kind(self):
        router = Router(Proxy())
        router.on_line(request(1, "_proxy/initialize", {}))
        self.assertEqual(outputs(router)[0]["method"], "_proxy/successor")

    def test_a_plain_initialize_is_refused(self):
        router = Router(Proxy())
        router.on_line(request(1, "initialize", {}))
        [answer] = outputs(router)
        self.assertEqual(answer["error"]["code"], -32600)
        self.assertIn("proxy/initialize", answer["error"]["message"])


class Hooks(unittest.TestCase):
    def test_a_prompt_hook_changes_what_the_agent_gets(self):
        class Shout(Proxy):
            def on_prompt(self, peers, params):
                return {**params, "prompt": [{"type": "text", "text": b["text"].upper()} for b in params["prompt"]]}

        chain = Initialized(Shout())
        chain.router.on_line(request(7, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}))
        [sent] = outputs(chain.router)
        self.assertEqual(sent["params"], {"method": "session/prompt", "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "HI"}]}})
        chain.router.on_line(result(sent["id"], {"stopReason": "end_turn"}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}])

    def test_agent_requests_go_plain_and_the_client_result_hook_sees_the_answer(self):
        class Upper(Proxy):
            def on_client_result(self, peers, method, params, result):
                if method == "fs/read_text_file":
                    return {"content": result["content"].upper() + params["path"]}
                return None

        chain = Initialized(Upper())
        chain.router.on_line(wrapped(41, "fs/read_text_file", {"sessionId": "s", "path": "/a"}))
        [sent] = outputs(chain.router)
        self.assertEqual(sent["method"], "fs/read_text_file")
        self.assertNotIn("proxy/successor", json.dumps(sent))
        chain.router.on_line(result(sent["id"], {"content": "abc"}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": 41, "result": {"content": "ABC/a"}}])

    def test_a_permission_hook_answers_without_the_editor(self):
        class Allow(Proxy):
            def on_permission_request(self, peers, params):
                return Respond({"outcome": {"outcome": "selected", "optionId": "allow"}})

        chain = Initialized(Allow())
        chain.router.on_line(wrapped(3, "session/request_permission", {"sessionId": "s", "toolCall": {}, "options": []}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": 3, "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}])

    def test_fail_answers_with_the_error_and_a_failing_hook_answers_too(self):
        class Refuse(Proxy):
            def on_agent_request(self, peers, method, params):
                if method == "terminal/create":
                    return Fail(-32000, "no terminals")
                raise RuntimeError("bug")

        chain = Initialized(Refuse())
        chain.router.on_line(wrapped(5, "terminal/create", {"command": "ls"}))
        chain.router.on_line(wrapped(6, "x/other", {}))
        first, second = outputs(chain.router)
        self.assertEqual(first["error"], {"code": -32000, "message": "no terminals"})
        self.assertEqual((second["id"], second["error"]["code"]), (6, -32603))

    def test_updates_can_be_changed_or_dropped(self):
        class Quiet(Proxy):
            def on_update(self, peers, params):
                if params["update"].get("sessionUpdate") == "plan":
                    return DROP
                return {**params, "seen": True}

        chain = Initialized(Quiet())
        chain.router.on_line(wrapped(None, "session/update", {"sessionId": "s", "update": {"sessionUpdate": "plan"}}))
        chain.router.on_line(wrapped(None, "session/update", {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "method": "session/update",
                                                  "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}, "seen": True}}])

    def test_session_start_runs_after_the_setup_answer_and_end_on_close(self):
        events = []

        class Sessions(Proxy):
            def on_session_start(self, peers, session_id, cwd):
                events.append(("start", session_id, cwd))
                peers.notify_editor("session/update", {"sessionId": session_id, "update": {"sessionUpdate": "hello"}})

            def on_session_end(self, peers, session_id):
                events.append(("end", session_id))

        chain = Initialized(Sessions())
        chain.router.on_line(request(9, "session/new", {"cwd": "/w", "mcpServers": []}))
        [sent] = outputs(chain.router)
        chain.router.on_line(result(sent["id"], {"sessionId": "s-1"}))
        answer, update = outputs(chain.router)
        self.assertEqual(answer, {"jsonrpc": "2.0", "id": 9, "result": {"sessionId": "s-1"}})
        self.assertEqual(update["method"], "session/update")
        chain.router.on_line(request(10, "session/close", {"sessionId": "s-1"}))
        self.assertEqual(events, [("start", "s-1", "/w"), ("end", "s-1")])

    def test_forward_then_runs_the_authors_hook_on_the_result(self):
        class Tag(Proxy):
            def on_editor_request(self, peers, method, params):
                return Forward(None, lambda result: {**result, "tagged": True})

        chain = Initialized(Tag())
        chain.router.on_line(request("x", "session/set_mode", {"sessionId": "s", "modeId": "m"}))
        [sent] = outputs(chain.router)
        chain.router.on_line(result(sent["id"], {}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": "x", "result": {"tagged": True}}])

    def test_a_deferred_request_is_answered_once_later(self):
        class Later(Proxy):
            def on_editor_request(self, peers, method, params):
                handle = peers.defer()
                peers.request_editor("x/ask", {}, lambda result, error: peers.respond(handle, {"asked": result}))
                return handle

        chain = Initialized(Later())
        chain.router.on_line(request(4, "x/question", {}))
        [ask] = outputs(chain.router)
        self.assertEqual(ask["method"], "x/ask")
        chain.router.on_line(result(ask["id"], 42))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": 4, "result": {"asked": 42}}])

    def test_defer_outside_a_request_hook_is_refused_after_a_request_was_decided(self):
        class Late(Proxy):
            def on_update(self, peers, params):
                peers.defer()  # not a request: the hook fails and the update passes on unchanged

        chain = Initialized(Late())
        chain.router.on_line(request(5, "session/prompt", {"sessionId": "s", "prompt": []}))
        outputs(chain.router)
        chain.router.on_line(wrapped(None, "session/update", {"sessionId": "s", "update": {}}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {}}}])
        self.assertEqual(chain.router.peers.open, set())
        with self.assertRaises(RuntimeError):
            chain.router.peers.defer()


class Responses(unittest.TestCase):
    def test_a_response_with_nothing_to_run_goes_back_with_its_bytes_as_they_came(self):
        chain = Initialized(Proxy())
        chain.router.on_line(request("req-7", "session/prompt", {"sessionId": "s", "prompt": []}))
        [sent] = outputs(chain.router)
        body = b'"result":{"stopReason":"end_turn","z":1.50,  "a":[ 2 ]},"_meta":{"x":"\xc3\xa9"}}'
        chain.router.on_line(b'{"jsonrpc":"2.0","id":%d,' % sent["id"] + body)
        self.assertEqual(chain.router.take_output(), b'{"jsonrpc":"2.0","id":"req-7",' + body + b"\n")
        self.assertEqual(chain.router.peers.in_flight, {})

    def test_an_error_response_goes_back_the_same_way(self):
        chain = Initialized(Proxy())
        chain.router.on_line(request(3, "session/prompt", {"sessionId": "s", "prompt": []}))
        [sent] = outputs(chain.router)
        chain.router.on_line(b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"no"}}' % sent["id"])
        self.assertEqual(chain.router.take_output(), b'{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"no"}}\n')

    def test_a_result_hook_still_runs_and_other_forms_take_the_full_path(self):
        class Tag(Proxy):
            def on_editor_request(self, peers, method, params):
                return Forward(None, lambda result: {**result, "tagged": True})

        chain = Initialized(Tag())
        chain.router.on_line(request(1, "x/one", {}))
        chain.router.on_line(request(2, "session/prompt", {"sessionId": "s", "prompt": []}))
        one, two = outputs(chain.router)
        chain.router.on_line(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % one["id"])
        chain.router.on_line(b'{ "id": %d, "jsonrpc": "2.0", "result": {"b": 1} }' % two["id"])
        chain.router.on_line(b'{"jsonrpc":"2.0","id":99,"result":{}}')
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "id": 1, "result": {"tagged": True}},
                                                 {"jsonrpc": "2.0", "id": 2, "result": {"b": 1}}])


class Cancellation(unittest.TestCase):
    def test_a_cancel_naming_a_forwarded_request_names_ours_plain(self):
        chain = Initialized(Proxy())
        chain.router.on_line(request("p", "session/prompt", {"sessionId": "s", "prompt": []}))
        [sent] = outputs(chain.router)
        chain.router.on_line(line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p"}}))
        self.assertEqual(outputs(chain.router), [{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": sent["id"]}}])

    def test_a_cancel_for_nothing_we_passed_on_sends_nothing(self):
        chain = Initialized(Proxy())
        chain.router.on_line(line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 99}}))
        self.assertEqual(outputs(chain.router), [])


class Tools(unittest.TestCase):
    def proxy(self) -> Proxy:
        def echo(peers, session, arguments):
            if not arguments.get("text"):
                raise ToolError("`text` is required")
            return f"{session}: {arguments['text']}"

        class Echo(Proxy):
            name = "echo"
            tools = [Tool("echo", "Says it back", {"type": "object"}, echo)]

        return Echo()

    def test_the_server_is_declared_and_its_tools_answer_over_mcp_message(self):
        chain = Initialized(self.proxy())
        chain.router.on_line(request(1, "session/new", {"cwd": "/w", "mcpServers": [{"name": "x"}]}))
        [sent] = outputs(chain.router)
        self.assertEqual(sent["params"]["params"]["mcpServers"], [{"name": "x"}, {"type": "acp", "name": "echo", "serverId": "echo-1"}])
        chain.router.on_line(result(sent["id"], {"sessionId": "s-9"}))
        chain.router.take_output()
        chain.router.on_line(wrapped(2, "mcp/message", {"serverId": "echo-1", "requestId": "r", "method": "tools/call",
                                                        "params": {"name": "echo", "arguments": {"text": "hi"}}}))
        chain.router.on_line(wrapped(3, "mcp/message", {"serverId": "echo-1", "requestId": "r2", "method": "tools/call",
                                                        "params": {"name": "echo", "arguments": {}}}))
        chain.router.on_line(wrapped(4, "mcp/message", {"serverId": "echo-1", "requestId": "r3", "method": "tools/list"}))
        done, refused, listed = outputs(chain.router)
        self.assertEqual(done["result"], {"result": {"content": [{"type": "text", "text": "s-9: hi"}]}})
        self.assertEqual(refused["result"]["result"]["isError"], True)
        self.assertEqual(listed["result"]["result"]["tools"][0]["name"], "echo")

    def test_messages_for_other_servers_pass_on(self):
        chain = Initialized(self.proxy())
        chain.router.on_line(wrapped(2, "mcp/message", {"serverId": "other-1", "method": "ping"}))
        [sent] = outputs(chain.router)
        self.assertEqual(sent["method"], "mcp/message")


class Framing(unittest.TestCase):
    def test_every_chunking_gives_the_same_lines(self):
        data = b'{"a":1}\n\n{"b":"\xc3\xa9"}\r\n{"c":3}'
        for size in range(1, len(data) + 1):
            splitter = LineSplitter()
            lines = []
            for at in range(0, len(data), size):
                lines += splitter.feed(data[at:at + size])
            lines += splitter.finish()
            self.assertEqual(lines, [b'{"a":1}', b'{"b":"\xc3\xa9"}', b'{"c":3}'], size)

    def test_a_chunk_of_whole_lines_gives_each_line_blank_ones_skipped_and_a_final_cr_cut(self):
        splitter = LineSplitter()
        lines = splitter.feed(b'{"a":1}\r\n\n \t\r\n{"b":"\xc3\xa9\\r"}\n\r\n')
        self.assertEqual(lines, [b'{"a":1}', b'{"b":"\xc3\xa9\\r"}'])
        self.assertEqual(splitter.feed(b'{"c":3}\n'), [b'{"c":3}'])

    def test_an_overlong_line_is_dropped_even_when_a_chunk_holds_whole_lines(self):
        splitter = LineSplitter(max_line=8)
        self.assertEqual((splitter.feed(b"0123456789\nok\n"), splitter.dropped), ([b"ok"], 1))

    def test_an_overlong_line_is_dropped_and_the_next_one_kept(self):
        splitter = LineSplitter(max_line=8)
        lines = splitter.feed(b"0123456789") + splitter.feed(b"abc\nok\n")
        self.assertEqual((lines, splitter.dropped), ([b"ok"], 1))

    def test_a_write_that_takes_part_of_the_bytes_is_repeated_until_all_are_written(self):
        taken = []

        def partial(fd, view):
            piece = bytes(view[:65536])
            taken.append(piece)
            return len(piece)

        data = b"x" * 70_000 + b"\n"
        write_all(1, data, partial)
        self.assertEqual(b"".join(taken), data)
        self.assertEqual([len(p) for p in taken], [65536, 70_001 - 65536])


class Codec(unittest.TestCase):
    VALUES = [{"jsonrpc": "2.0", "id": 7, "result": {"a": [1, -2.5, None, True, False, "é\n\"\u2028😀"], "b": {}}},
              [], "x", 1e300, 0, {"nested": [[[{}]]]}]

    def test_encoding_is_compact_utf_8_json_ending_in_a_newline(self):
        for value in self.VALUES:
            expected = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            self.assertEqual(codec.encode(value), expected)

    def test_decoding_gives_what_json_loads_gives(self):
        for value in self.VALUES:
            for text in (json.dumps(value).encode(), codec.encode(value).rstrip(b"\n"), b" " + json.dumps(value).encode() + b" \t"):
                self.assertEqual(codec.decode(text), json.loads(text))

    def test_what_is_not_one_json_value_is_refused_with_json_loads_message(self):
        for bad in (b"{", b"{}x", b"", b"\xff{}", b'{"a":}'):
            with self.assertRaises(ValueError) as ours:
                codec.decode(bad)
            with self.assertRaises(ValueError) as theirs:
                json.loads(bad)
            self.assertEqual(str(ours.exception), str(theirs.exception))

    def test_a_cycle_and_an_object_json_cannot_encode_are_refused(self):
        cycle: dict = {}
        cycle["self"] = cycle
        with self.assertRaises(ValueError):
            codec.encode(cycle)
        with self.assertRaises(TypeError):
            codec.encode({"x": object()})


class Serve(unittest.TestCase):
    def test_a_proxy_served_over_pipes_passes_a_70_kb_line_whole(self):
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        big = "y" * 70_000
        lines = [request(0, "proxy/initialize", {}), result(0, {}),
                 wrapped(None, "session/update", {"sessionId": "s", "update": {"text": big}})]
        received = bytearray()

        def feed():
            write_all(in_write, b"\n".join(lines) + b"\n")
            os.close(in_write)

        writer = threading.Thread(target=feed)
        writer.start()

        def drain():
            while chunk := os.read(out_read, 65536):
                received.extend(chunk)

        reader = threading.Thread(target=drain)
        reader.start()
        serve(Proxy(), in_read, out_write)
        os.close(out_write)
        reader.join()
        writer.join()
        os.close(in_read)
        os.close(out_read)
        sent = [json.loads(text) for text in received.decode().splitlines()]
        self.assertEqual(len(sent), 3)
        self.assertEqual(sent[2]["params"]["update"]["text"], big)


if __name__ == "__main__":
    unittest.main()
