"""Wire types of every MCP revision we speak: attrs models, snake_case attributes,
camelCase on the wire.

One model covers a definition across revisions; attributes a revision lacks are
left out when writing for a peer on that revision (see :func:`unstructure`).
Requests and notifications carry their ``method``; results are read as the
type the request names in ``result_model``.
"""

from ._types._base import (
    LOGGING_LEVELS as LOGGING_LEVELS,
)
from ._types._base import (
    BaseMetadata as BaseMetadata,
)
from ._types._base import (
    CacheablePaginatedResult as CacheablePaginatedResult,
)
from ._types._base import (
    CacheableResult as CacheableResult,
)
from ._types._base import (
    Cursor as Cursor,
)
from ._types._base import (
    EmptyResult as EmptyResult,
)
from ._types._base import (
    Error as Error,
)
from ._types._base import (
    Icon as Icon,
)
from ._types._base import (
    Icons as Icons,
)
from ._types._base import (
    Implementation as Implementation,
)
from ._types._base import (
    InputResponses as InputResponses,
)
from ._types._base import (
    JSONArray as JSONArray,
)
from ._types._base import (
    JSONObject as JSONObject,
)
from ._types._base import (
    JSONValue as JSONValue,
)
from ._types._base import (
    LoggingLevel as LoggingLevel,
)
from ._types._base import (
    MetaObject as MetaObject,
)
from ._types._base import (
    Notification as Notification,
)
from ._types._base import (
    NotificationMetaObject as NotificationMetaObject,
)
from ._types._base import (
    NotificationParams as NotificationParams,
)
from ._types._base import (
    PaginatedRequestParams as PaginatedRequestParams,
)
from ._types._base import (
    PaginatedResult as PaginatedResult,
)
from ._types._base import (
    ProgressToken as ProgressToken,
)
from ._types._base import (
    Request as Request,
)
from ._types._base import (
    RequestId as RequestId,
)
from ._types._base import (
    RequestMetaObject as RequestMetaObject,
)
from ._types._base import (
    RequestParams as RequestParams,
)
from ._types._base import (
    Result as Result,
)
from ._types._base import (
    ResultMetaObject as ResultMetaObject,
)
from ._types._base import (
    ResultType as ResultType,
)
from ._types._base import (
    Role as Role,
)
from ._types._base import (
    SubscriptionsListenResultMetaObject as SubscriptionsListenResultMetaObject,
)
from ._types._capabilities import (
    ClientCapabilities as ClientCapabilities,
)
from ._types._capabilities import (
    ElicitationCapability as ElicitationCapability,
)
from ._types._capabilities import (
    PromptsCapability as PromptsCapability,
)
from ._types._capabilities import (
    ResourcesCapability as ResourcesCapability,
)
from ._types._capabilities import (
    RootsCapability as RootsCapability,
)
from ._types._capabilities import (
    SamplingCapability as SamplingCapability,
)
from ._types._capabilities import (
    ServerCapabilities as ServerCapabilities,
)
from ._types._capabilities import (
    ToolsCapability as ToolsCapability,
)
from ._types._completion import (
    CompleteRequest as CompleteRequest,
)
from ._types._completion import (
    CompleteRequestParams as CompleteRequestParams,
)
from ._types._completion import (
    CompleteResult as CompleteResult,
)
from ._types._completion import (
    Completion as Completion,
)
from ._types._completion import (
    CompletionArgument as CompletionArgument,
)
from ._types._completion import (
    CompletionContext as CompletionContext,
)
from ._types._completion import (
    PromptReference as PromptReference,
)
from ._types._completion import (
    ResourceTemplateReference as ResourceTemplateReference,
)
from ._types._content import (
    Annotations as Annotations,
)
from ._types._content import (
    AnyResourceContents as AnyResourceContents,
)
from ._types._content import (
    AudioContent as AudioContent,
)
from ._types._content import (
    BlobResourceContents as BlobResourceContents,
)
from ._types._content import (
    ContentBlock as ContentBlock,
)
from ._types._content import (
    EmbeddedResource as EmbeddedResource,
)
from ._types._content import (
    ImageContent as ImageContent,
)
from ._types._content import (
    ResourceContents as ResourceContents,
)
from ._types._content import (
    ResourceLink as ResourceLink,
)
from ._types._content import (
    SamplingMessageContentBlock as SamplingMessageContentBlock,
)
from ._types._content import (
    TextContent as TextContent,
)
from ._types._content import (
    TextResourceContents as TextResourceContents,
)
from ._types._content import (
    ToolResultContent as ToolResultContent,
)
from ._types._content import (
    ToolUseContent as ToolUseContent,
)
from ._types._converter import (
    StructureError as StructureError,
)
from ._types._converter import (
    converter as converter,
)
from ._types._converter import (
    converter_for as converter_for,
)
from ._types._converter import (
    explain as explain,
)
from ._types._converter import (
    structure as structure,
)
from ._types._converter import (
    unstructure as unstructure,
)
from ._types._converter import (
    wire_name as wire_name,
)
from ._types._elicitation import (
    BooleanSchema as BooleanSchema,
)
from ._types._elicitation import (
    ElicitationCompleteNotification as ElicitationCompleteNotification,
)
from ._types._elicitation import (
    ElicitationCompleteNotificationParams as ElicitationCompleteNotificationParams,
)
from ._types._elicitation import (
    ElicitRequest as ElicitRequest,
)
from ._types._elicitation import (
    ElicitRequestFormParams as ElicitRequestFormParams,
)
from ._types._elicitation import (
    ElicitRequestParams as ElicitRequestParams,
)
from ._types._elicitation import (
    ElicitRequestURLParams as ElicitRequestURLParams,
)
from ._types._elicitation import (
    ElicitResult as ElicitResult,
)
from ._types._elicitation import (
    EnumOption as EnumOption,
)
from ._types._elicitation import (
    EnumSchema as EnumSchema,
)
from ._types._elicitation import (
    LegacyTitledEnumSchema as LegacyTitledEnumSchema,
)
from ._types._elicitation import (
    MultiSelectEnumSchema as MultiSelectEnumSchema,
)
from ._types._elicitation import (
    NumberSchema as NumberSchema,
)
from ._types._elicitation import (
    PrimitiveSchemaDefinition as PrimitiveSchemaDefinition,
)
from ._types._elicitation import (
    SingleSelectEnumSchema as SingleSelectEnumSchema,
)
from ._types._elicitation import (
    StringSchema as StringSchema,
)
from ._types._elicitation import (
    TitledEnumItems as TitledEnumItems,
)
from ._types._elicitation import (
    TitledMultiSelectEnumSchema as TitledMultiSelectEnumSchema,
)
from ._types._elicitation import (
    TitledSingleSelectEnumSchema as TitledSingleSelectEnumSchema,
)
from ._types._elicitation import (
    UntitledEnumItems as UntitledEnumItems,
)
from ._types._elicitation import (
    UntitledMultiSelectEnumSchema as UntitledMultiSelectEnumSchema,
)
from ._types._elicitation import (
    UntitledSingleSelectEnumSchema as UntitledSingleSelectEnumSchema,
)
from ._types._elicitation import (
    URLElicitationRequiredErrorData as URLElicitationRequiredErrorData,
)
from ._types._lifecycle import (
    DiscoverRequest as DiscoverRequest,
)
from ._types._lifecycle import (
    DiscoverResult as DiscoverResult,
)
from ._types._lifecycle import (
    InitializedNotification as InitializedNotification,
)
from ._types._lifecycle import (
    InitializeRequest as InitializeRequest,
)
from ._types._lifecycle import (
    InitializeRequestParams as InitializeRequestParams,
)
from ._types._lifecycle import (
    InitializeResult as InitializeResult,
)
from ._types._lifecycle import (
    PingRequest as PingRequest,
)
from ._types._methods import (
    INPUT_REQUEST_CAPABILITIES as INPUT_REQUEST_CAPABILITIES,
)
from ._types._methods import (
    METHODS as METHODS,
)
from ._types._methods import (
    MRTR_METHODS as MRTR_METHODS,
)
from ._types._methods import (
    MethodSpec as MethodSpec,
)
from ._types._methods import (
    has_capability as has_capability,
)
from ._types._mrtr import (
    InputRequest as InputRequest,
)
from ._types._mrtr import (
    InputRequests as InputRequests,
)
from ._types._mrtr import (
    InputRequiredResult as InputRequiredResult,
)
from ._types._mrtr import (
    InputResponse as InputResponse,
)
from ._types._mrtr import (
    InputResponseRequestParams as InputResponseRequestParams,
)
from ._types._notifications import (
    CancelledNotification as CancelledNotification,
)
from ._types._notifications import (
    CancelledNotificationParams as CancelledNotificationParams,
)
from ._types._notifications import (
    LoggingMessageNotification as LoggingMessageNotification,
)
from ._types._notifications import (
    LoggingMessageNotificationParams as LoggingMessageNotificationParams,
)
from ._types._notifications import (
    ProgressNotification as ProgressNotification,
)
from ._types._notifications import (
    ProgressNotificationParams as ProgressNotificationParams,
)
from ._types._notifications import (
    SetLevelRequest as SetLevelRequest,
)
from ._types._notifications import (
    SetLevelRequestParams as SetLevelRequestParams,
)
from ._types._prompts import (
    GetPromptRequest as GetPromptRequest,
)
from ._types._prompts import (
    GetPromptRequestParams as GetPromptRequestParams,
)
from ._types._prompts import (
    GetPromptResult as GetPromptResult,
)
from ._types._prompts import (
    ListPromptsRequest as ListPromptsRequest,
)
from ._types._prompts import (
    ListPromptsResult as ListPromptsResult,
)
from ._types._prompts import (
    Prompt as Prompt,
)
from ._types._prompts import (
    PromptArgument as PromptArgument,
)
from ._types._prompts import (
    PromptListChangedNotification as PromptListChangedNotification,
)
from ._types._prompts import (
    PromptMessage as PromptMessage,
)
from ._types._resources import (
    ListResourcesRequest as ListResourcesRequest,
)
from ._types._resources import (
    ListResourcesResult as ListResourcesResult,
)
from ._types._resources import (
    ListResourceTemplatesRequest as ListResourceTemplatesRequest,
)
from ._types._resources import (
    ListResourceTemplatesResult as ListResourceTemplatesResult,
)
from ._types._resources import (
    ReadResourceRequest as ReadResourceRequest,
)
from ._types._resources import (
    ReadResourceRequestParams as ReadResourceRequestParams,
)
from ._types._resources import (
    ReadResourceResult as ReadResourceResult,
)
from ._types._resources import (
    Resource as Resource,
)
from ._types._resources import (
    ResourceListChangedNotification as ResourceListChangedNotification,
)
from ._types._resources import (
    ResourceRequestParams as ResourceRequestParams,
)
from ._types._resources import (
    ResourceTemplate as ResourceTemplate,
)
from ._types._resources import (
    ResourceUpdatedNotification as ResourceUpdatedNotification,
)
from ._types._resources import (
    ResourceUpdatedNotificationParams as ResourceUpdatedNotificationParams,
)
from ._types._resources import (
    SubscribeRequest as SubscribeRequest,
)
from ._types._resources import (
    SubscribeRequestParams as SubscribeRequestParams,
)
from ._types._resources import (
    UnsubscribeRequest as UnsubscribeRequest,
)
from ._types._resources import (
    UnsubscribeRequestParams as UnsubscribeRequestParams,
)
from ._types._roots import (
    ListRootsRequest as ListRootsRequest,
)
from ._types._roots import (
    ListRootsResult as ListRootsResult,
)
from ._types._roots import (
    Root as Root,
)
from ._types._roots import (
    RootsListChangedNotification as RootsListChangedNotification,
)
from ._types._sampling import (
    CreateMessageRequest as CreateMessageRequest,
)
from ._types._sampling import (
    CreateMessageRequestParams as CreateMessageRequestParams,
)
from ._types._sampling import (
    CreateMessageResult as CreateMessageResult,
)
from ._types._sampling import (
    ModelHint as ModelHint,
)
from ._types._sampling import (
    ModelPreferences as ModelPreferences,
)
from ._types._sampling import (
    SamplingMessage as SamplingMessage,
)
from ._types._sampling import (
    ToolChoice as ToolChoice,
)
from ._types._subscriptions import (
    SubscriptionFilter as SubscriptionFilter,
)
from ._types._subscriptions import (
    SubscriptionsAcknowledgedNotification as SubscriptionsAcknowledgedNotification,
)
from ._types._subscriptions import (
    SubscriptionsAcknowledgedNotificationParams as SubscriptionsAcknowledgedNotificationParams,
)
from ._types._subscriptions import (
    SubscriptionsListenRequest as SubscriptionsListenRequest,
)
from ._types._subscriptions import (
    SubscriptionsListenRequestParams as SubscriptionsListenRequestParams,
)
from ._types._subscriptions import (
    SubscriptionsListenResult as SubscriptionsListenResult,
)
from ._types._tasks import (
    CancelTaskRequest as CancelTaskRequest,
)
from ._types._tasks import (
    CancelTaskResult as CancelTaskResult,
)
from ._types._tasks import (
    CreateTaskResult as CreateTaskResult,
)
from ._types._tasks import (
    GetTaskPayloadRequest as GetTaskPayloadRequest,
)
from ._types._tasks import (
    GetTaskPayloadResult as GetTaskPayloadResult,
)
from ._types._tasks import (
    GetTaskRequest as GetTaskRequest,
)
from ._types._tasks import (
    GetTaskResult as GetTaskResult,
)
from ._types._tasks import (
    ListTasksRequest as ListTasksRequest,
)
from ._types._tasks import (
    ListTasksResult as ListTasksResult,
)
from ._types._tasks import (
    RelatedTaskMetadata as RelatedTaskMetadata,
)
from ._types._tasks import (
    Task as Task,
)
from ._types._tasks import (
    TaskAugmentedRequestParams as TaskAugmentedRequestParams,
)
from ._types._tasks import (
    TaskIdParams as TaskIdParams,
)
from ._types._tasks import (
    TaskResult as TaskResult,
)
from ._types._tasks import (
    TaskStatus as TaskStatus,
)
from ._types._tasks import (
    TaskStatusNotification as TaskStatusNotification,
)
from ._types._tasks import (
    TaskStatusNotificationParams as TaskStatusNotificationParams,
)
from ._types._tools import (
    CallToolRequest as CallToolRequest,
)
from ._types._tools import (
    CallToolRequestParams as CallToolRequestParams,
)
from ._types._tools import (
    CallToolResult as CallToolResult,
)
from ._types._tools import (
    ListToolsRequest as ListToolsRequest,
)
from ._types._tools import (
    ListToolsResult as ListToolsResult,
)
from ._types._tools import (
    TaskMetadata as TaskMetadata,
)
from ._types._tools import (
    Tool as Tool,
)
from ._types._tools import (
    ToolAnnotations as ToolAnnotations,
)
from ._types._tools import (
    ToolExecution as ToolExecution,
)
from ._types._tools import (
    ToolListChangedNotification as ToolListChangedNotification,
)
