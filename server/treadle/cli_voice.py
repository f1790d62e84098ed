"""``treadle speak AGENT "text" > out.wav`` and ``treadle listen AGENT in.wav``: an agent's voice
from the shell, over ``VoiceService``.

``speak`` writes a WAV file to standard output (or ``--out FILE``) as the audio streams in, sentence
by sentence; ``listen`` sends a WAV file (16-bit mono) and prints what was heard. Both are
clients: they start without importing the server.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, BinaryIO

import grpc

from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from treadle_client import default_target
from treadle_client._connect import Connect

from . import cli_security

_PIECE = 8192
"""Bytes of audio per Listen message: a quarter of a second at 16 kHz."""


def add_parser(sub: Any) -> None:
    speak = sub.add_parser("speak", help="say text in an agent's voice, as a WAV file",
                           description="Say TEXT with AGENT's voice. The WAV file goes to standard output "
                                       "(redirect it: > out.wav) or to --out.")
    speak.add_argument("agent", metavar="AGENT")
    speak.add_argument("text", metavar="TEXT")
    speak.add_argument("--out", metavar="FILE", type=Path, help="write the WAV file here instead of standard output")
    speak.add_argument("--speaker", default="", help="a voice id (see the agent's speakers); default: the agent's")
    speak.add_argument("--rate", metavar="HZ", type=int, default=0,
                       help="sample rate (8000-48000; default: the voice's own)")
    _common(speak)
    speak.set_defaults(run=lambda args: asyncio.run(_speak(args)))
    listen = sub.add_parser("listen", help="print what an agent's voice hears in a WAV file",
                            description="Transcribe a WAV file (16-bit PCM, mono) with AGENT's voice.")
    listen.add_argument("agent", metavar="AGENT")
    listen.add_argument("file", metavar="FILE.wav", type=Path)
    listen.add_argument("--phrase", action="append", default=[], dest="phrases", metavar="PHRASE",
                        help="hear only these phrases (repeat the option for each); default: open speech")
    _common(listen)
    listen.set_defaults(run=lambda args: asyncio.run(_listen(args)))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", metavar="HOST:PORT", default=None,
                        help=f"server address (default: {default_target()}; set TREADLE_TARGET to change it)")
    cli_security.add_client_arguments(parser)


async def _speak(args: argparse.Namespace) -> int:
    if args.out is None and sys.stdout.isatty():
        print("treadle speak: standard output is a terminal; redirect it (> out.wav) or pass --out FILE",
              file=sys.stderr)
        return 2
    target = args.target or default_target()
    connect = Connect(cli_security.client_options(args).get("tls"))
    request = pb.SpeakRequest(agent_id=args.agent, text=args.text, speaker=args.speaker,
                              format=pb.AudioFormat(encoding=pb.AUDIO_ENCODING_WAV, sample_rate_hertz=args.rate))
    out: BinaryIO = args.out.open("wb") if args.out is not None else sys.stdout.buffer
    channel = connect.channel(target)
    try:
        size = 0
        async for response in pb_grpc.VoiceServiceStub(channel).Speak(request, metadata=connect.metadata):
            out.write(response.audio)
            out.flush()
            size += len(response.audio)
        if args.out is not None:  # a file can be finished with its real sizes
            _patch_sizes(out, size)
    except grpc.aio.AioRpcError as e:
        print(cli_security.rpc_error("speak", e, target, args), file=sys.stderr)
        return 1
    finally:
        await channel.close()
        if args.out is not None:
            out.close()
    return 0


def _patch_sizes(out: BinaryIO, size: int) -> None:
    out.seek(4)
    out.write((size - 8).to_bytes(4, "little"))
    out.seek(40)
    out.write((size - 44).to_bytes(4, "little"))


async def _listen(args: argparse.Namespace) -> int:
    try:
        audio = args.file.read_bytes()
    except OSError as e:
        print(f"treadle listen: cannot read {args.file}: {e.strerror}", file=sys.stderr)
        return 2
    target = args.target or default_target()
    connect = Connect(cli_security.client_options(args).get("tls"))

    async def requests() -> AsyncIterator[pb.ListenRequest]:
        yield pb.ListenRequest(config=pb.ListenConfig(
            agent_id=args.agent, phrases=args.phrases, format=pb.AudioFormat(encoding=pb.AUDIO_ENCODING_WAV)))
        for at in range(0, len(audio), _PIECE):
            yield pb.ListenRequest(audio=audio[at:at + _PIECE])

    channel = connect.channel(target)
    try:
        async for response in pb_grpc.VoiceServiceStub(channel).Listen(requests(), metadata=connect.metadata):
            if response.is_final:
                print(response.text)
    except grpc.aio.AioRpcError as e:
        print(cli_security.rpc_error("listen", e, target, args), file=sys.stderr)
        return 1
    finally:
        await channel.close()
    return 0
