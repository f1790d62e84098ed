import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import message_pb2 as _message_pb2
from treadle.v1 import notification_pb2 as _notification_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FailurePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAILURE_POLICY_UNSPECIFIED: _ClassVar[FailurePolicy]
    FAILURE_POLICY_FAIL_CLOSED: _ClassVar[FailurePolicy]
    FAILURE_POLICY_FAIL_OPEN: _ClassVar[FailurePolicy]

class ToolChoiceMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CHOICE_MODE_UNSPECIFIED: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_AUTO: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_NONE: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_REQUIRED: _ClassVar[ToolChoiceMode]

class AgentSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_SOURCE_UNSPECIFIED: _ClassVar[AgentSource]
    AGENT_SOURCE_CONFIG: _ClassVar[AgentSource]
    AGENT_SOURCE_CODE: _ClassVar[AgentSource]
    AGENT_SOURCE_API: _ClassVar[AgentSource]

class SubAgentMemory(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUB_AGENT_MEMORY_UNSPECIFIED: _ClassVar[SubAgentMemory]
    SUB_AGENT_MEMORY_FRESH_THREAD: _ClassVar[SubAgentMemory]
    SUB_AGENT_MEMORY_STABLE_THREAD: _ClassVar[SubAgentMemory]
    SUB_AGENT_MEMORY_NONE: _ClassVar[SubAgentMemory]

class SubAgentFailure(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUB_AGENT_FAILURE_UNSPECIFIED: _ClassVar[SubAgentFailure]
    SUB_AGENT_FAILURE_TOOL_ERROR: _ClassVar[SubAgentFailure]
    SUB_AGENT_FAILURE_FAIL_RUN: _ClassVar[SubAgentFailure]

class EditorTools(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EDITOR_TOOLS_UNSPECIFIED: _ClassVar[EditorTools]
    EDITOR_TOOLS_ALL: _ClassVar[EditorTools]
    EDITOR_TOOLS_DESCRIPTIONS: _ClassVar[EditorTools]
    EDITOR_TOOLS_NONE: _ClassVar[EditorTools]
FAILURE_POLICY_UNSPECIFIED: FailurePolicy
FAILURE_POLICY_FAIL_CLOSED: FailurePolicy
FAILURE_POLICY_FAIL_OPEN: FailurePolicy
TOOL_CHOICE_MODE_UNSPECIFIED: ToolChoiceMode
TOOL_CHOICE_MODE_AUTO: ToolChoiceMode
TOOL_CHOICE_MODE_NONE: ToolChoiceMode
TOOL_CHOICE_MODE_REQUIRED: ToolChoiceMode
AGENT_SOURCE_UNSPECIFIED: AgentSource
AGENT_SOURCE_CONFIG: AgentSource
AGENT_SOURCE_CODE: AgentSource
AGENT_SOURCE_API: AgentSource
SUB_AGENT_MEMORY_UNSPECIFIED: SubAgentMemory
SUB_AGENT_MEMORY_FRESH_THREAD: SubAgentMemory
SUB_AGENT_MEMORY_STABLE_THREAD: SubAgentMemory
SUB_AGENT_MEMORY_NONE: SubAgentMemory
SUB_AGENT_FAILURE_UNSPECIFIED: SubAgentFailure
SUB_AGENT_FAILURE_TOOL_ERROR: SubAgentFailure
SUB_AGENT_FAILURE_FAIL_RUN: SubAgentFailure
EDITOR_TOOLS_UNSPECIFIED: EditorTools
EDITOR_TOOLS_ALL: EditorTools
EDITOR_TOOLS_DESCRIPTIONS: EditorTools
EDITOR_TOOLS_NONE: EditorTools

class ProcessorRef(_message.Message):
    __slots__ = ("id", "failure_policy", "timeout", "builtin", "options", "parallel_group", "with_model", "locked")
    ID_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    BUILTIN_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_GROUP_FIELD_NUMBER: _ClassVar[int]
    WITH_MODEL_FIELD_NUMBER: _ClassVar[int]
    LOCKED_FIELD_NUMBER: _ClassVar[int]
    id: str
    failure_policy: FailurePolicy
    timeout: _duration_pb2.Duration
    builtin: str
    options: _struct_pb2.Struct
    parallel_group: str
    with_model: bool
    locked: bool
    def __init__(self, id: _Optional[str] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., builtin: _Optional[str] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., parallel_group: _Optional[str] = ..., with_model: _Optional[bool] = ..., locked: _Optional[bool] = ...) -> None: ...

class ProcessorList(_message.Message):
    __slots__ = ("processors",)
    PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    def __init__(self, processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ...) -> None: ...

class ModelSettings(_message.Message):
    __slots__ = ("temperature", "max_output_tokens", "top_p", "seed", "stop_sequences", "presence_penalty", "frequency_penalty", "max_retries")
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STOP_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    PRESENCE_PENALTY_FIELD_NUMBER: _ClassVar[int]
    FREQUENCY_PENALTY_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    max_output_tokens: int
    top_p: float
    seed: int
    stop_sequences: _containers.RepeatedScalarFieldContainer[str]
    presence_penalty: float
    frequency_penalty: float
    max_retries: int
    def __init__(self, temperature: _Optional[float] = ..., max_output_tokens: _Optional[int] = ..., top_p: _Optional[float] = ..., seed: _Optional[int] = ..., stop_sequences: _Optional[_Iterable[str]] = ..., presence_penalty: _Optional[float] = ..., frequency_penalty: _Optional[float] = ..., max_retries: _Optional[int] = ...) -> None: ...

class FallbackModel(_message.Message):
    __slots__ = ("model", "base_url", "max_retries", "provider_credential")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    model: str
    base_url: str
    max_retries: int
    provider_credential: str
    def __init__(self, model: _Optional[str] = ..., base_url: _Optional[str] = ..., max_retries: _Optional[int] = ..., provider_credential: _Optional[str] = ...) -> None: ...

class ToolChoice(_message.Message):
    __slots__ = ("mode", "tool_name")
    MODE_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    mode: ToolChoiceMode
    tool_name: str
    def __init__(self, mode: _Optional[_Union[ToolChoiceMode, str]] = ..., tool_name: _Optional[str] = ...) -> None: ...

class ToolHooksRef(_message.Message):
    __slots__ = ("before_tool_call", "after_tool_call")
    BEFORE_TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    AFTER_TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    before_tool_call: str
    after_tool_call: str
    def __init__(self, before_tool_call: _Optional[str] = ..., after_tool_call: _Optional[str] = ...) -> None: ...

class ThreadOptions(_message.Message):
    __slots__ = ("id", "title", "metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MemoryOptions(_message.Message):
    __slots__ = ("resource", "thread_id", "thread")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_FIELD_NUMBER: _ClassVar[int]
    resource: str
    thread_id: str
    thread: ThreadOptions
    def __init__(self, resource: _Optional[str] = ..., thread_id: _Optional[str] = ..., thread: _Optional[_Union[ThreadOptions, _Mapping]] = ...) -> None: ...

class StructuredOutput(_message.Message):
    __slots__ = ("schema", "name")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    schema: _struct_pb2.Struct
    name: str
    def __init__(self, schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., name: _Optional[str] = ...) -> None: ...

class CallOptions(_message.Message):
    __slots__ = ("input_processors", "output_processors", "error_processors", "max_steps", "max_processor_retries", "tool_choice", "active_tools", "model_settings", "provider_options", "memory", "request_context", "structured_output", "tool_hooks", "model", "version", "parent")
    INPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_PROCESSOR_RETRIES_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOL_HOOKS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    input_processors: ProcessorList
    output_processors: ProcessorList
    error_processors: ProcessorList
    max_steps: int
    max_processor_retries: int
    tool_choice: ToolChoice
    active_tools: _containers.RepeatedScalarFieldContainer[str]
    model_settings: ModelSettings
    provider_options: _struct_pb2.Struct
    memory: MemoryOptions
    request_context: _struct_pb2.Struct
    structured_output: StructuredOutput
    tool_hooks: ToolHooksRef
    model: str
    version: str
    parent: ParentRun
    def __init__(self, input_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., output_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., error_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., max_steps: _Optional[int] = ..., max_processor_retries: _Optional[int] = ..., tool_choice: _Optional[_Union[ToolChoice, _Mapping]] = ..., active_tools: _Optional[_Iterable[str]] = ..., model_settings: _Optional[_Union[ModelSettings, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., memory: _Optional[_Union[MemoryOptions, _Mapping]] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., structured_output: _Optional[_Union[StructuredOutput, _Mapping]] = ..., tool_hooks: _Optional[_Union[ToolHooksRef, _Mapping]] = ..., model: _Optional[str] = ..., version: _Optional[str] = ..., parent: _Optional[_Union[ParentRun, _Mapping]] = ...) -> None: ...

class ParentRun(_message.Message):
    __slots__ = ("run_id", "tool_call_id", "agent_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    tool_call_id: str
    agent_id: str
    def __init__(self, run_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class MemorySettings(_message.Message):
    __slots__ = ("last_messages",)
    LAST_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    last_messages: int
    def __init__(self, last_messages: _Optional[int] = ...) -> None: ...

class SystemMessages(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.SystemMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.SystemMessage, _Mapping]]] = ...) -> None: ...

class Agent(_message.Message):
    __slots__ = ("id", "name", "description", "metadata", "instructions", "instruction_messages", "model", "base_url", "fallback_models", "tools", "input_processors", "output_processors", "error_processors", "max_processor_retries", "default_options", "request_context_schema", "tool_hooks", "source", "create_time", "update_time", "provider_credential", "memory", "notifications", "error_processor_defaults", "sub_agents", "tool_payload_rules", "tool_payload_processors", "model_variants", "instructions_variants", "tools_variants", "input_processors_variants", "output_processors_variants", "error_processors_variants", "default_options_variants", "resolver", "scorers", "voice", "editor")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_MODELS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    INPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    MAX_PROCESSOR_RETRIES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TOOL_HOOKS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSOR_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    SUB_AGENTS_FIELD_NUMBER: _ClassVar[int]
    TOOL_PAYLOAD_RULES_FIELD_NUMBER: _ClassVar[int]
    TOOL_PAYLOAD_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    INPUT_PROCESSORS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSORS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSORS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OPTIONS_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    RESOLVER_FIELD_NUMBER: _ClassVar[int]
    SCORERS_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    EDITOR_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    metadata: _struct_pb2.Struct
    instructions: str
    instruction_messages: SystemMessages
    model: str
    base_url: str
    fallback_models: _containers.RepeatedCompositeFieldContainer[FallbackModel]
    tools: _containers.RepeatedScalarFieldContainer[str]
    input_processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    output_processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    error_processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    max_processor_retries: int
    default_options: CallOptions
    request_context_schema: _struct_pb2.Struct
    tool_hooks: ToolHooksRef
    source: AgentSource
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    provider_credential: str
    memory: MemorySettings
    notifications: _notification_pb2.NotificationSettings
    error_processor_defaults: bool
    sub_agents: _containers.RepeatedCompositeFieldContainer[SubAgentRef]
    tool_payload_rules: _containers.RepeatedCompositeFieldContainer[ToolPayloadRule]
    tool_payload_processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    model_variants: _containers.RepeatedCompositeFieldContainer[ModelVariant]
    instructions_variants: _containers.RepeatedCompositeFieldContainer[InstructionsVariant]
    tools_variants: _containers.RepeatedCompositeFieldContainer[ToolsVariant]
    input_processors_variants: _containers.RepeatedCompositeFieldContainer[ProcessorsVariant]
    output_processors_variants: _containers.RepeatedCompositeFieldContainer[ProcessorsVariant]
    error_processors_variants: _containers.RepeatedCompositeFieldContainer[ProcessorsVariant]
    default_options_variants: _containers.RepeatedCompositeFieldContainer[CallOptionsVariant]
    resolver: ProcessorRef
    scorers: _containers.RepeatedCompositeFieldContainer[ScorerRef]
    voice: VoiceSettings
    editor: AgentEditor
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., instructions: _Optional[str] = ..., instruction_messages: _Optional[_Union[SystemMessages, _Mapping]] = ..., model: _Optional[str] = ..., base_url: _Optional[str] = ..., fallback_models: _Optional[_Iterable[_Union[FallbackModel, _Mapping]]] = ..., tools: _Optional[_Iterable[str]] = ..., input_processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ..., output_processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ..., error_processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ..., max_processor_retries: _Optional[int] = ..., default_options: _Optional[_Union[CallOptions, _Mapping]] = ..., request_context_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tool_hooks: _Optional[_Union[ToolHooksRef, _Mapping]] = ..., source: _Optional[_Union[AgentSource, str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., provider_credential: _Optional[str] = ..., memory: _Optional[_Union[MemorySettings, _Mapping]] = ..., notifications: _Optional[_Union[_notification_pb2.NotificationSettings, _Mapping]] = ..., error_processor_defaults: _Optional[bool] = ..., sub_agents: _Optional[_Iterable[_Union[SubAgentRef, _Mapping]]] = ..., tool_payload_rules: _Optional[_Iterable[_Union[ToolPayloadRule, _Mapping]]] = ..., tool_payload_processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ..., model_variants: _Optional[_Iterable[_Union[ModelVariant, _Mapping]]] = ..., instructions_variants: _Optional[_Iterable[_Union[InstructionsVariant, _Mapping]]] = ..., tools_variants: _Optional[_Iterable[_Union[ToolsVariant, _Mapping]]] = ..., input_processors_variants: _Optional[_Iterable[_Union[ProcessorsVariant, _Mapping]]] = ..., output_processors_variants: _Optional[_Iterable[_Union[ProcessorsVariant, _Mapping]]] = ..., error_processors_variants: _Optional[_Iterable[_Union[ProcessorsVariant, _Mapping]]] = ..., default_options_variants: _Optional[_Iterable[_Union[CallOptionsVariant, _Mapping]]] = ..., resolver: _Optional[_Union[ProcessorRef, _Mapping]] = ..., scorers: _Optional[_Iterable[_Union[ScorerRef, _Mapping]]] = ..., voice: _Optional[_Union[VoiceSettings, _Mapping]] = ..., editor: _Optional[_Union[AgentEditor, _Mapping]] = ...) -> None: ...

class RemoteSubAgent(_message.Message):
    __slots__ = ("target", "agent_id")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    target: str
    agent_id: str
    def __init__(self, target: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class SubAgentRef(_message.Message):
    __slots__ = ("key", "agent_id", "remote", "description", "memory", "max_steps", "include_tool_results", "failure")
    KEY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    REMOTE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TOOL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    key: str
    agent_id: str
    remote: RemoteSubAgent
    description: str
    memory: SubAgentMemory
    max_steps: int
    include_tool_results: bool
    failure: SubAgentFailure
    def __init__(self, key: _Optional[str] = ..., agent_id: _Optional[str] = ..., remote: _Optional[_Union[RemoteSubAgent, _Mapping]] = ..., description: _Optional[str] = ..., memory: _Optional[_Union[SubAgentMemory, str]] = ..., max_steps: _Optional[int] = ..., include_tool_results: _Optional[bool] = ..., failure: _Optional[_Union[SubAgentFailure, str]] = ...) -> None: ...

class AgentEditor(_message.Message):
    __slots__ = ("locked", "instructions", "tools")
    LOCKED_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    locked: bool
    instructions: bool
    tools: EditorTools
    def __init__(self, locked: _Optional[bool] = ..., instructions: _Optional[bool] = ..., tools: _Optional[_Union[EditorTools, str]] = ...) -> None: ...

class ToolPayloadRule(_message.Message):
    __slots__ = ("tools", "targets", "phase", "drop", "mask", "mask_with", "replace", "suppress")
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    MASK_FIELD_NUMBER: _ClassVar[int]
    MASK_WITH_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    SUPPRESS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedScalarFieldContainer[str]
    targets: _containers.RepeatedScalarFieldContainer[str]
    phase: str
    drop: _containers.RepeatedScalarFieldContainer[str]
    mask: _containers.RepeatedScalarFieldContainer[str]
    mask_with: str
    replace: _struct_pb2.Value
    suppress: bool
    def __init__(self, tools: _Optional[_Iterable[str]] = ..., targets: _Optional[_Iterable[str]] = ..., phase: _Optional[str] = ..., drop: _Optional[_Iterable[str]] = ..., mask: _Optional[_Iterable[str]] = ..., mask_with: _Optional[str] = ..., replace: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., suppress: _Optional[bool] = ...) -> None: ...

class ToolNames(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class VariantRule(_message.Message):
    __slots__ = ("field", "operator", "value", "conditions")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    field: str
    operator: str
    value: _struct_pb2.Value
    conditions: _containers.RepeatedCompositeFieldContainer[VariantRule]
    def __init__(self, field: _Optional[str] = ..., operator: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., conditions: _Optional[_Iterable[_Union[VariantRule, _Mapping]]] = ...) -> None: ...

class ModelVariant(_message.Message):
    __slots__ = ("value", "rules")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    value: str
    rules: VariantRule
    def __init__(self, value: _Optional[str] = ..., rules: _Optional[_Union[VariantRule, _Mapping]] = ...) -> None: ...

class InstructionsVariant(_message.Message):
    __slots__ = ("value", "rules", "messages")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    value: str
    rules: VariantRule
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.SystemMessage]
    def __init__(self, value: _Optional[str] = ..., rules: _Optional[_Union[VariantRule, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.SystemMessage, _Mapping]]] = ...) -> None: ...

class ToolsVariant(_message.Message):
    __slots__ = ("value", "rules")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    value: _containers.RepeatedScalarFieldContainer[str]
    rules: VariantRule
    def __init__(self, value: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[VariantRule, _Mapping]] = ...) -> None: ...

class ProcessorsVariant(_message.Message):
    __slots__ = ("value", "rules")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    value: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    rules: VariantRule
    def __init__(self, value: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ..., rules: _Optional[_Union[VariantRule, _Mapping]] = ...) -> None: ...

class CallOptionsVariant(_message.Message):
    __slots__ = ("value", "rules")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    value: CallOptions
    rules: VariantRule
    def __init__(self, value: _Optional[_Union[CallOptions, _Mapping]] = ..., rules: _Optional[_Union[VariantRule, _Mapping]] = ...) -> None: ...

class ScorerRef(_message.Message):
    __slots__ = ("id", "builtin", "options", "sampling", "filter", "timeout", "failure_policy")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUILTIN_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    id: str
    builtin: str
    options: _struct_pb2.Struct
    sampling: ScorerSampling
    filter: ScoringFilter
    timeout: _duration_pb2.Duration
    failure_policy: FailurePolicy
    def __init__(self, id: _Optional[str] = ..., builtin: _Optional[str] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., sampling: _Optional[_Union[ScorerSampling, _Mapping]] = ..., filter: _Optional[_Union[ScoringFilter, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ...) -> None: ...

class ScorerSampling(_message.Message):
    __slots__ = ("none", "ratio")
    NONE_FIELD_NUMBER: _ClassVar[int]
    RATIO_FIELD_NUMBER: _ClassVar[int]
    none: _empty_pb2.Empty
    ratio: float
    def __init__(self, none: _Optional[_Union[_empty_pb2.Empty, _Mapping]] = ..., ratio: _Optional[float] = ...) -> None: ...

class ScoringFilter(_message.Message):
    __slots__ = ("match", "conditions", "groups")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    match: str
    conditions: _containers.RepeatedCompositeFieldContainer[ScoringCondition]
    groups: _containers.RepeatedCompositeFieldContainer[ScoringFilter]
    def __init__(self, match: _Optional[str] = ..., conditions: _Optional[_Iterable[_Union[ScoringCondition, _Mapping]]] = ..., groups: _Optional[_Iterable[_Union[ScoringFilter, _Mapping]]] = ...) -> None: ...

class ScoringCondition(_message.Message):
    __slots__ = ("field", "operator", "value")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    field: str
    operator: str
    value: _struct_pb2.Value
    def __init__(self, field: _Optional[str] = ..., operator: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class VoiceSettings(_message.Message):
    __slots__ = ("input", "output", "realtime", "speaker")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    REALTIME_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    input: VoiceProviderRef
    output: VoiceProviderRef
    realtime: VoiceProviderRef
    speaker: str
    def __init__(self, input: _Optional[_Union[VoiceProviderRef, _Mapping]] = ..., output: _Optional[_Union[VoiceProviderRef, _Mapping]] = ..., realtime: _Optional[_Union[VoiceProviderRef, _Mapping]] = ..., speaker: _Optional[str] = ...) -> None: ...

class VoiceProviderRef(_message.Message):
    __slots__ = ("id", "failure_policy", "options")
    ID_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    id: str
    failure_policy: FailurePolicy
    options: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
