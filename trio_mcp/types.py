"""Wire types of every MCP revision we speak: attrs models, snake_case attributes,
camelCase on the wire.

One model covers a definition across revisions; attributes a revision lacks are
left out when writing for a peer on that revision (see :func:`unstructure`).
Requests and notifications carry their ``method``; results are read as the
type the request names in ``result_model``.
"""

from ._types._base import (
    LOGGING_LEVELS as LOGGING_LEVELS,
    CacheablePaginatedResult as CacheablePaginatedResult,
    CacheableResult as CacheableResult,
    Cursor as Cursor,
    EmptyResult as EmptyResult,
    Error as Error,
    Icon as Icon,
    Implementation as Implementation,
    InputResponses as InputResponses,
    JSONArray as JSONArray,
    JSONObject as JSONObject,
    JSONValue as JSONValue,
    LoggingLevel as LoggingLevel,
    MetaObject as MetaObject,
    Notification as Notification,
    NotificationParams as NotificationParams,
    PaginatedRequestParams as PaginatedRequestParams,
    PaginatedResult as PaginatedResult,
    ProgressToken as ProgressToken,
    Request as Request,
    RequestId as RequestId,
    RequestParams as RequestParams,
    Result as Result,
    ResultType as ResultType,
    Role as Role,
)
from ._types._capabilities import (
    ClientCapabilities as ClientCapabilities,
    ElicitationCapability as ElicitationCapability,
    PromptsCapability as PromptsCapability,
    ResourcesCapability as ResourcesCapability,
    RootsCapability as RootsCapability,
    SamplingCapability as SamplingCapability,
    ServerCapabilities as ServerCapabilities,
    ToolsCapability as ToolsCapability,
)
from ._types._completion import (
    CompleteRequest as CompleteRequest,
    CompleteRequestParams as CompleteRequestParams,
    CompleteResult as CompleteResult,
    Completion as Completion,
    CompletionArgument as CompletionArgument,
    CompletionContext as CompletionContext,
    PromptReference as PromptReference,
    ResourceTemplateReference as ResourceTemplateReference,
)
from ._types._content import (
    Annotations as Annotations,
    AnyResourceContents as AnyResourceContents,
    AudioContent as AudioContent,
    BlobResourceContents as BlobResourceContents,
    ContentBlock as ContentBlock,
    EmbeddedResource as EmbeddedResource,
    ImageContent as ImageContent,
    ResourceContents as ResourceContents,
    ResourceLink as ResourceLink,
    SamplingMessageContentBlock as SamplingMessageContentBlock,
    TextContent as TextContent,
    TextResourceContents as TextResourceContents,
    ToolResultContent as ToolResultContent,
    ToolUseContent as ToolUseContent,
)
from ._types._converter import (
    StructureError as StructureError,
    converter as converter,
    converter_for as converter_for,
    explain as explain,
    structure as structure,
    unstructure as unstructure,
    wire_name as wire_name,
)
from ._types._elicitation import (
    BooleanSchema as BooleanSchema,
    ElicitationCompleteNotification as ElicitationCompleteNotification,
    ElicitationCompleteNotificationParams as ElicitationCompleteNotificationParams,
    ElicitRequest as ElicitRequest,
    ElicitRequestFormParams as ElicitRequestFormParams,
    ElicitRequestParams as ElicitRequestParams,
    ElicitRequestURLParams as ElicitRequestURLParams,
    ElicitResult as ElicitResult,
    EnumOption as EnumOption,
    EnumSchema as EnumSchema,
    LegacyTitledEnumSchema as LegacyTitledEnumSchema,
    MultiSelectEnumSchema as MultiSelectEnumSchema,
    NumberSchema as NumberSchema,
    PrimitiveSchemaDefinition as PrimitiveSchemaDefinition,
    SingleSelectEnumSchema as SingleSelectEnumSchema,
    StringSchema as StringSchema,
    TitledEnumItems as TitledEnumItems,
    TitledMultiSelectEnumSchema as TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema as TitledSingleSelectEnumSchema,
    UntitledEnumItems as UntitledEnumItems,
    UntitledMultiSelectEnumSchema as UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema as UntitledSingleSelectEnumSchema,
    URLElicitationRequiredErrorData as URLElicitationRequiredErrorData,
)
from ._types._inputs import (
    InputRequest as InputRequest,
    InputRequests as InputRequests,
    InputResponse as InputResponse,
)
from ._types._lifecycle import (
    DiscoverRequest as DiscoverRequest,
    DiscoverResult as DiscoverResult,
    InitializedNotification as InitializedNotification,
    InitializeRequest as InitializeRequest,
    InitializeRequestParams as InitializeRequestParams,
    InitializeResult as InitializeResult,
    PingRequest as PingRequest,
)
from ._types._meta import (
    BaseMetadata as BaseMetadata,
    Icons as Icons,
    NotificationMetaObject as NotificationMetaObject,
    RequestMetaObject as RequestMetaObject,
    ResultMetaObject as ResultMetaObject,
    SubscriptionsListenResultMetaObject as SubscriptionsListenResultMetaObject,
)
from ._types._methods import (
    INPUT_REQUEST_CAPABILITIES as INPUT_REQUEST_CAPABILITIES,
    METHODS as METHODS,
    MRTR_METHODS as MRTR_METHODS,
    MethodSpec as MethodSpec,
    has_capability as has_capability,
)
from ._types._mrtr import (
    InputRequiredResult as InputRequiredResult,
    InputResponseRequestParams as InputResponseRequestParams,
)
from ._types._notifications import (
    CancelledNotification as CancelledNotification,
    CancelledNotificationParams as CancelledNotificationParams,
    LoggingMessageNotification as LoggingMessageNotification,
    LoggingMessageNotificationParams as LoggingMessageNotificationParams,
    ProgressNotification as ProgressNotification,
    ProgressNotificationParams as ProgressNotificationParams,
    SetLevelRequest as SetLevelRequest,
    SetLevelRequestParams as SetLevelRequestParams,
)
from ._types._prompts import (
    GetPromptRequest as GetPromptRequest,
    GetPromptRequestParams as GetPromptRequestParams,
    GetPromptResult as GetPromptResult,
    ListPromptsRequest as ListPromptsRequest,
    ListPromptsResult as ListPromptsResult,
    Prompt as Prompt,
    PromptArgument as PromptArgument,
    PromptListChangedNotification as PromptListChangedNotification,
    PromptMessage as PromptMessage,
)
from ._types._resources import (
    ListResourcesRequest as ListResourcesRequest,
    ListResourcesResult as ListResourcesResult,
    ListResourceTemplatesRequest as ListResourceTemplatesRequest,
    ListResourceTemplatesResult as ListResourceTemplatesResult,
    ReadResourceRequest as ReadResourceRequest,
    ReadResourceRequestParams as ReadResourceRequestParams,
    ReadResourceResult as ReadResourceResult,
    Resource as Resource,
    ResourceListChangedNotification as ResourceListChangedNotification,
    ResourceRequestParams as ResourceRequestParams,
    ResourceTemplate as ResourceTemplate,
    ResourceUpdatedNotification as ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams as ResourceUpdatedNotificationParams,
    SubscribeRequest as SubscribeRequest,
    SubscribeRequestParams as SubscribeRequestParams,
    UnsubscribeRequest as UnsubscribeRequest,
    UnsubscribeRequestParams as UnsubscribeRequestParams,
)
from ._types._roots import (
    ListRootsRequest as ListRootsRequest,
    ListRootsResult as ListRootsResult,
    Root as Root,
    RootsListChangedNotification as RootsListChangedNotification,
)
from ._types._sampling import (
    CreateMessageRequest as CreateMessageRequest,
    CreateMessageRequestParams as CreateMessageRequestParams,
    CreateMessageResult as CreateMessageResult,
    ModelHint as ModelHint,
    ModelPreferences as ModelPreferences,
    SamplingMessage as SamplingMessage,
    ToolChoice as ToolChoice,
)
from ._types._subscriptions import (
    SubscriptionFilter as SubscriptionFilter,
    SubscriptionsAcknowledgedNotification as SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedNotificationParams as SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequest as SubscriptionsListenRequest,
    SubscriptionsListenRequestParams as SubscriptionsListenRequestParams,
    SubscriptionsListenResult as SubscriptionsListenResult,
)
from ._types._tasks import (
    CancelTaskRequest as CancelTaskRequest,
    CancelTaskResult as CancelTaskResult,
    CreateTaskResult as CreateTaskResult,
    GetTaskPayloadRequest as GetTaskPayloadRequest,
    GetTaskPayloadResult as GetTaskPayloadResult,
    GetTaskRequest as GetTaskRequest,
    GetTaskResult as GetTaskResult,
    ListTasksRequest as ListTasksRequest,
    ListTasksResult as ListTasksResult,
    RelatedTaskMetadata as RelatedTaskMetadata,
    Task as Task,
    TaskAugmentedRequestParams as TaskAugmentedRequestParams,
    TaskIdParams as TaskIdParams,
    TaskResult as TaskResult,
    TaskStatus as TaskStatus,
    TaskStatusNotification as TaskStatusNotification,
    TaskStatusNotificationParams as TaskStatusNotificationParams,
)
from ._types._tools import (
    CallToolRequest as CallToolRequest,
    CallToolRequestParams as CallToolRequestParams,
    CallToolResult as CallToolResult,
    ListToolsRequest as ListToolsRequest,
    ListToolsResult as ListToolsResult,
    TaskMetadata as TaskMetadata,
    Tool as Tool,
    ToolAnnotations as ToolAnnotations,
    ToolExecution as ToolExecution,
    ToolListChangedNotification as ToolListChangedNotification,
)
