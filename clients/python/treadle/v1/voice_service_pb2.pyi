import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import remote_pb2 as _remote_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AudioEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIO_ENCODING_UNSPECIFIED: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_PCM16: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_WAV: _ClassVar[AudioEncoding]
    AUDIO_ENCODING_MULAW: _ClassVar[AudioEncoding]

class TurnEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TURN_EVENT_KIND_UNSPECIFIED: _ClassVar[TurnEventKind]
    TURN_EVENT_KIND_STARTED: _ClassVar[TurnEventKind]
    TURN_EVENT_KIND_ENDED: _ClassVar[TurnEventKind]
AUDIO_ENCODING_UNSPECIFIED: AudioEncoding
AUDIO_ENCODING_PCM16: AudioEncoding
AUDIO_ENCODING_WAV: AudioEncoding
AUDIO_ENCODING_MULAW: AudioEncoding
TURN_EVENT_KIND_UNSPECIFIED: TurnEventKind
TURN_EVENT_KIND_STARTED: TurnEventKind
TURN_EVENT_KIND_ENDED: TurnEventKind

class AudioFormat(_message.Message):
    __slots__ = ("encoding", "sample_rate_hertz")
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_HERTZ_FIELD_NUMBER: _ClassVar[int]
    encoding: AudioEncoding
    sample_rate_hertz: int
    def __init__(self, encoding: _Optional[_Union[AudioEncoding, str]] = ..., sample_rate_hertz: _Optional[int] = ...) -> None: ...

class SpeakRequest(_message.Message):
    __slots__ = ("agent_id", "text", "speaker", "format")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    text: str
    speaker: str
    format: AudioFormat
    def __init__(self, agent_id: _Optional[str] = ..., text: _Optional[str] = ..., speaker: _Optional[str] = ..., format: _Optional[_Union[AudioFormat, _Mapping]] = ...) -> None: ...

class SpeakResponse(_message.Message):
    __slots__ = ("audio", "text", "format")
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    audio: bytes
    text: str
    format: AudioFormat
    def __init__(self, audio: _Optional[bytes] = ..., text: _Optional[str] = ..., format: _Optional[_Union[AudioFormat, _Mapping]] = ...) -> None: ...

class ListenRequest(_message.Message):
    __slots__ = ("config", "audio")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    config: ListenConfig
    audio: bytes
    def __init__(self, config: _Optional[_Union[ListenConfig, _Mapping]] = ..., audio: _Optional[bytes] = ...) -> None: ...

class ListenConfig(_message.Message):
    __slots__ = ("agent_id", "format", "interim_results", "phrases")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    INTERIM_RESULTS_FIELD_NUMBER: _ClassVar[int]
    PHRASES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    format: AudioFormat
    interim_results: bool
    phrases: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., format: _Optional[_Union[AudioFormat, _Mapping]] = ..., interim_results: _Optional[bool] = ..., phrases: _Optional[_Iterable[str]] = ...) -> None: ...

class ListenResponse(_message.Message):
    __slots__ = ("text", "is_final")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IS_FINAL_FIELD_NUMBER: _ClassVar[int]
    text: str
    is_final: bool
    def __init__(self, text: _Optional[str] = ..., is_final: _Optional[bool] = ...) -> None: ...

class GetSpeakersRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetSpeakersResponse(_message.Message):
    __slots__ = ("speakers",)
    SPEAKERS_FIELD_NUMBER: _ClassVar[int]
    speakers: _containers.RepeatedCompositeFieldContainer[Speaker]
    def __init__(self, speakers: _Optional[_Iterable[_Union[Speaker, _Mapping]]] = ...) -> None: ...

class Speaker(_message.Message):
    __slots__ = ("voice_id", "metadata")
    VOICE_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    voice_id: str
    metadata: _struct_pb2.Struct
    def __init__(self, voice_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class GetListenerRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetListenerResponse(_message.Message):
    __slots__ = ("enabled",)
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    def __init__(self, enabled: _Optional[bool] = ...) -> None: ...

class ConverseRequest(_message.Message):
    __slots__ = ("config", "audio", "text", "end_of_turn", "interrupt")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    END_OF_TURN_FIELD_NUMBER: _ClassVar[int]
    INTERRUPT_FIELD_NUMBER: _ClassVar[int]
    config: ConverseConfig
    audio: bytes
    text: str
    end_of_turn: EndOfTurn
    interrupt: Interrupt
    def __init__(self, config: _Optional[_Union[ConverseConfig, _Mapping]] = ..., audio: _Optional[bytes] = ..., text: _Optional[str] = ..., end_of_turn: _Optional[_Union[EndOfTurn, _Mapping]] = ..., interrupt: _Optional[_Union[Interrupt, _Mapping]] = ...) -> None: ...

class ConverseConfig(_message.Message):
    __slots__ = ("agent_id", "thread_id", "resource_id", "input_format", "output_format", "speaker", "request_context", "phrases", "barge_in")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    PHRASES_FIELD_NUMBER: _ClassVar[int]
    BARGE_IN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    thread_id: str
    resource_id: str
    input_format: AudioFormat
    output_format: AudioFormat
    speaker: str
    request_context: _struct_pb2.Struct
    phrases: _containers.RepeatedScalarFieldContainer[str]
    barge_in: bool
    def __init__(self, agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., input_format: _Optional[_Union[AudioFormat, _Mapping]] = ..., output_format: _Optional[_Union[AudioFormat, _Mapping]] = ..., speaker: _Optional[str] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., phrases: _Optional[_Iterable[str]] = ..., barge_in: _Optional[bool] = ...) -> None: ...

class EndOfTurn(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Interrupt(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ConverseResponse(_message.Message):
    __slots__ = ("turn", "transcript", "chunk", "audio", "barge_in", "error")
    TURN_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    BARGE_IN_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    turn: TurnEvent
    transcript: Transcript
    chunk: _chunk_pb2.Chunk
    audio: ConverseAudio
    barge_in: BargeIn
    error: VoiceError
    def __init__(self, turn: _Optional[_Union[TurnEvent, _Mapping]] = ..., transcript: _Optional[_Union[Transcript, _Mapping]] = ..., chunk: _Optional[_Union[_chunk_pb2.Chunk, _Mapping]] = ..., audio: _Optional[_Union[ConverseAudio, _Mapping]] = ..., barge_in: _Optional[_Union[BargeIn, _Mapping]] = ..., error: _Optional[_Union[VoiceError, _Mapping]] = ...) -> None: ...

class TurnEvent(_message.Message):
    __slots__ = ("kind", "turn", "run_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    kind: TurnEventKind
    turn: int
    run_id: str
    def __init__(self, kind: _Optional[_Union[TurnEventKind, str]] = ..., turn: _Optional[int] = ..., run_id: _Optional[str] = ...) -> None: ...

class Transcript(_message.Message):
    __slots__ = ("role", "text", "is_final", "turn")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    IS_FINAL_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    role: str
    text: str
    is_final: bool
    turn: int
    def __init__(self, role: _Optional[str] = ..., text: _Optional[str] = ..., is_final: _Optional[bool] = ..., turn: _Optional[int] = ...) -> None: ...

class ConverseAudio(_message.Message):
    __slots__ = ("audio", "text", "turn", "format")
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    audio: bytes
    text: str
    turn: int
    format: AudioFormat
    def __init__(self, audio: _Optional[bytes] = ..., text: _Optional[str] = ..., turn: _Optional[int] = ..., format: _Optional[_Union[AudioFormat, _Mapping]] = ...) -> None: ...

class BargeIn(_message.Message):
    __slots__ = ("turn",)
    TURN_FIELD_NUMBER: _ClassVar[int]
    turn: int
    def __init__(self, turn: _Optional[int] = ...) -> None: ...

class VoiceError(_message.Message):
    __slots__ = ("turn", "message")
    TURN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    turn: int
    message: str
    def __init__(self, turn: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class VoiceProviderServiceAttachRequest(_message.Message):
    __slots__ = ("handshake", "audio", "transcript", "error")
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    handshake: VoiceProviderHandshake
    audio: SynthesizedAudio
    transcript: TranscribeResult
    error: VoiceProviderError
    def __init__(self, handshake: _Optional[_Union[VoiceProviderHandshake, _Mapping]] = ..., audio: _Optional[_Union[SynthesizedAudio, _Mapping]] = ..., transcript: _Optional[_Union[TranscribeResult, _Mapping]] = ..., error: _Optional[_Union[VoiceProviderError, _Mapping]] = ...) -> None: ...

class VoiceProviderServiceAttachResponse(_message.Message):
    __slots__ = ("welcome", "synthesize", "transcribe", "cancel", "drain")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIZE_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIBE_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    welcome: VoiceProviderWelcome
    synthesize: SynthesizeInvocation
    transcribe: TranscribeInvocation
    cancel: _remote_pb2.CancelInvocation
    drain: _remote_pb2.Drain
    def __init__(self, welcome: _Optional[_Union[VoiceProviderWelcome, _Mapping]] = ..., synthesize: _Optional[_Union[SynthesizeInvocation, _Mapping]] = ..., transcribe: _Optional[_Union[TranscribeInvocation, _Mapping]] = ..., cancel: _Optional[_Union[_remote_pb2.CancelInvocation, _Mapping]] = ..., drain: _Optional[_Union[_remote_pb2.Drain, _Mapping]] = ...) -> None: ...

class VoiceProviderHandshake(_message.Message):
    __slots__ = ("protocol_versions", "providers", "instance_id")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    providers: _containers.RepeatedCompositeFieldContainer[VoiceProviderDeclaration]
    instance_id: str
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., providers: _Optional[_Iterable[_Union[VoiceProviderDeclaration, _Mapping]]] = ..., instance_id: _Optional[str] = ...) -> None: ...

class VoiceProviderDeclaration(_message.Message):
    __slots__ = ("id", "speech_to_text", "text_to_speech", "sample_rate_hertz", "speakers")
    ID_FIELD_NUMBER: _ClassVar[int]
    SPEECH_TO_TEXT_FIELD_NUMBER: _ClassVar[int]
    TEXT_TO_SPEECH_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_HERTZ_FIELD_NUMBER: _ClassVar[int]
    SPEAKERS_FIELD_NUMBER: _ClassVar[int]
    id: str
    speech_to_text: bool
    text_to_speech: bool
    sample_rate_hertz: int
    speakers: _containers.RepeatedCompositeFieldContainer[Speaker]
    def __init__(self, id: _Optional[str] = ..., speech_to_text: _Optional[bool] = ..., text_to_speech: _Optional[bool] = ..., sample_rate_hertz: _Optional[int] = ..., speakers: _Optional[_Iterable[_Union[Speaker, _Mapping]]] = ...) -> None: ...

class VoiceProviderWelcome(_message.Message):
    __slots__ = ("protocol_version", "providers", "server_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    providers: _containers.RepeatedScalarFieldContainer[str]
    server_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., providers: _Optional[_Iterable[str]] = ..., server_id: _Optional[str] = ...) -> None: ...

class SynthesizeInvocation(_message.Message):
    __slots__ = ("invocation_id", "provider_id", "text", "speaker", "agent_id", "trace_context", "deadline")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    provider_id: str
    text: str
    speaker: str
    agent_id: str
    trace_context: _remote_pb2.TraceContext
    deadline: _timestamp_pb2.Timestamp
    def __init__(self, invocation_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., text: _Optional[str] = ..., speaker: _Optional[str] = ..., agent_id: _Optional[str] = ..., trace_context: _Optional[_Union[_remote_pb2.TraceContext, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TranscribeInvocation(_message.Message):
    __slots__ = ("invocation_id", "provider_id", "audio", "phrases", "agent_id", "trace_context", "deadline")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    PHRASES_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    provider_id: str
    audio: bytes
    phrases: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    trace_context: _remote_pb2.TraceContext
    deadline: _timestamp_pb2.Timestamp
    def __init__(self, invocation_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., audio: _Optional[bytes] = ..., phrases: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ..., trace_context: _Optional[_Union[_remote_pb2.TraceContext, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SynthesizedAudio(_message.Message):
    __slots__ = ("invocation_id", "audio", "last")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    audio: bytes
    last: bool
    def __init__(self, invocation_id: _Optional[str] = ..., audio: _Optional[bytes] = ..., last: _Optional[bool] = ...) -> None: ...

class TranscribeResult(_message.Message):
    __slots__ = ("invocation_id", "text")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    text: str
    def __init__(self, invocation_id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class VoiceProviderError(_message.Message):
    __slots__ = ("invocation_id", "message")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    message: str
    def __init__(self, invocation_id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...
