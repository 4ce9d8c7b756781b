package apperr

// The catalogue of reasons. Codes keep Boomerang Flow v4's numbers where v4 had the reason;
// new reasons are numbered in the same families: 10xx general, 11xx team, 12xx workflow,
// 13xx run, 14xx task, 15xx task run, 16xx action, 17xx schedule, 18xx parameter,
// 19xx identity and token, 20xx integration. The OpenAPI spec lists the same table.
var (
	Internal               = Reason{"INTERNAL_ERROR", 1000, KindInternal}
	QueryInvalidFilters    = Reason{"QUERY_INVALID_FILTERS", 1001, KindInvalid}
	RequestInvalid         = Reason{"REQUEST_INVALID", 1002, KindInvalid}
	RequestTooLarge        = Reason{"REQUEST_TOO_LARGE", 1003, KindTooLarge}
	UnsupportedMediaType   = Reason{"UNSUPPORTED_MEDIA_TYPE", 1004, KindUnsupportedMedia}
	RouteNotFound          = Reason{"ROUTE_NOT_FOUND", 1005, KindNotFound}
	MethodNotAllowed       = Reason{"METHOD_NOT_ALLOWED", 1006, KindMethodNotAllowed}
	Unauthenticated        = Reason{"UNAUTHENTICATED", 1007, KindUnauthenticated}
	DependencyUnavailable  = Reason{"DEPENDENCY_UNAVAILABLE", 1008, KindUnavailable}
	RequestURITooLong      = Reason{"REQUEST_URI_TOO_LONG", 1009, KindURITooLong}
	RequestHeadersTooLarge = Reason{"REQUEST_HEADERS_TOO_LARGE", 1017, KindHeadersTooLarge}
	RequestTimeout         = Reason{"REQUEST_TIMEOUT", 1018, KindRequestTimeout}
	TokenInvalidReq        = Reason{"TOKEN_INVALID_REQ", 1010, KindInvalid}
	TokenInvalidSessionReq = Reason{"TOKEN_INVALID_SESSION_REQ", 1011, KindInvalid}
	TokenInvalidPermission = Reason{"TOKEN_INVALID_PERMISSION", 1012, KindForbidden}
	PermissionDenied       = Reason{"PERMISSION_DENIED", 1013, KindForbidden}
	UpstreamUnreachable    = Reason{"UPSTREAM_UNREACHABLE", 1014, KindBadGateway}
	UpstreamUnavailable    = Reason{"UPSTREAM_UNAVAILABLE", 1015, KindUnavailable}
	UpstreamTimeout        = Reason{"UPSTREAM_TIMEOUT", 1016, KindTimeout}
	QuotaExceeded          = Reason{"QUOTA_EXCEEDED", 1020, KindTooMany}
	RateLimited            = Reason{"RATE_LIMITED", 1021, KindTooMany}
	ConcurrentModification = Reason{"CONCURRENT_MODIFICATION", 1030, KindConflict}

	TeamInvalidReq      = Reason{"TEAM_INVALID_REQ", 1101, KindInvalid}
	TeamNonUniqueName   = Reason{"TEAM_NON_UNIQUE_NAME", 1102, KindUnprocessable}
	TeamInvalidUserRole = Reason{"TEAM_INVALID_USER_ROLE", 1103, KindInvalid}
	TeamNotFound        = Reason{"TEAM_NOT_FOUND", 1104, KindNotFound}
	TeamHasActiveRuns   = Reason{"TEAM_HAS_ACTIVE_RUNS", 1105, KindConflict}
	TeamLastOwner       = Reason{"TEAM_LAST_OWNER", 1106, KindConflict}
	TeamReservedName    = Reason{"TEAM_RESERVED_NAME", 1107, KindUnprocessable}

	WorkflowInvalidReq        = Reason{"WORKFLOW_INVALID_REQ", 1201, KindInvalid}
	WorkflowNotActive         = Reason{"WORKFLOW_NOT_ACTIVE", 1202, KindInvalid}
	WorkflowRevisionNotFound  = Reason{"WORKFLOW_REVISION_NOT_FOUND", 1204, KindNotFound}
	WorkflowNonUniqueTaskName = Reason{"WORKFLOW_NON_UNIQUE_TASK_NAME", 1205, KindInvalid}
	WorkflowInvalidTaskRef    = Reason{"WORKFLOW_INVALID_TASK_REF", 1206, KindInvalid}
	WorkflowNotFound          = Reason{"WORKFLOW_NOT_FOUND", 1207, KindNotFound}
	WorkflowAlreadyExists     = Reason{"WORKFLOW_ALREADY_EXISTS", 1208, KindConflict}
	WorkflowInvalid           = Reason{"WORKFLOW_INVALID", 1209, KindInvalid}
	WorkflowHasActiveRuns     = Reason{"WORKFLOW_HAS_ACTIVE_RUNS", 1210, KindConflict}

	WorkflowRunInvalidReq      = Reason{"WORKFLOWRUN_INVALID_REQ", 1302, KindInvalid}
	WorkflowRunInvalidPhase    = Reason{"WORKFLOWRUN_INVALID_PHASE", 1304, KindConflict}
	WorkflowRunTriggerDisabled = Reason{"WORKFLOWRUN_TRIGGER_DISABLED", 1305, KindInvalid}
	WorkflowRunNotFound        = Reason{"WORKFLOWRUN_NOT_FOUND", 1306, KindNotFound}

	TaskAlreadyExists  = Reason{"TASK_ALREADY_EXISTS", 1402, KindConflict}
	TaskInvalidName    = Reason{"TASK_INVALID_NAME", 1403, KindInvalid}
	TaskInactiveStatus = Reason{"TASK_INACTIVE_STATUS", 1404, KindInvalid}
	TaskNotFound       = Reason{"TASK_NOT_FOUND", 1406, KindNotFound}
	TaskInvalid        = Reason{"TASK_INVALID", 1407, KindInvalid}
	TaskInUse          = Reason{"TASK_IN_USE", 1408, KindConflict}

	TaskRunNotFound = Reason{"TASKRUN_NOT_FOUND", 1506, KindNotFound}

	ActionUnableToAction = Reason{"ACTION_UNABLE_TO_ACTION", 1603, KindConflict}
	ActionNotFound       = Reason{"ACTION_NOT_FOUND", 1604, KindNotFound}

	ScheduleInvalidReq     = Reason{"SCHEDULE_INVALID_REQ", 1702, KindInvalid}
	ScheduleInvalidRunOnce = Reason{"SCHEDULE_INVALID_RUNONCE", 1703, KindInvalid}
	ScheduleInvalidCron    = Reason{"SCHEDULE_INVALID_CRON", 1704, KindInvalid}
	ScheduleNotFound       = Reason{"SCHEDULE_NOT_FOUND", 1706, KindNotFound}

	ParamsNotFound           = Reason{"PARAMS_NOT_FOUND", 1801, KindNotFound}
	ParamsNonUniqueReference = Reason{"PARAMS_NON_UNIQUE_REFERENCE", 1802, KindConflict}

	UserNotFound   = Reason{"USER_NOT_FOUND", 1901, KindNotFound}
	InstanceLocked = Reason{"INSTANCE_LOCKED", 1902, KindLocked}
	UserEmailTaken = Reason{"USER_EMAIL_TAKEN", 1903, KindConflict}
	TokenNotFound  = Reason{"TOKEN_NOT_FOUND", 1911, KindNotFound}

	IntegrationInvalidSignature = Reason{"INTEGRATION_INVALID_SIGNATURE", 2001, KindUnauthenticated}
	IntegrationNotLinked        = Reason{"INTEGRATION_NOT_LINKED", 2002, KindNotFound}
	IntegrationAlreadyLinked    = Reason{"INTEGRATION_ALREADY_LINKED", 2003, KindConflict}
)

// Catalogue lists every reason, for the OpenAPI spec and for tests that keep codes unique.
var Catalogue = []Reason{
	Internal, QueryInvalidFilters, RequestInvalid, RequestTooLarge, UnsupportedMediaType,
	RouteNotFound, MethodNotAllowed, Unauthenticated, DependencyUnavailable, RequestURITooLong,
	RequestHeadersTooLarge, RequestTimeout, TokenInvalidReq,
	TokenInvalidSessionReq, TokenInvalidPermission, PermissionDenied, UpstreamUnreachable,
	UpstreamUnavailable, UpstreamTimeout, QuotaExceeded, RateLimited, ConcurrentModification,
	TeamInvalidReq, TeamNonUniqueName, TeamInvalidUserRole, TeamNotFound, TeamHasActiveRuns,
	TeamLastOwner, TeamReservedName,
	WorkflowInvalidReq, WorkflowNotActive, WorkflowRevisionNotFound, WorkflowNonUniqueTaskName,
	WorkflowInvalidTaskRef, WorkflowNotFound, WorkflowAlreadyExists, WorkflowInvalid,
	WorkflowHasActiveRuns,
	WorkflowRunInvalidReq, WorkflowRunInvalidPhase, WorkflowRunTriggerDisabled, WorkflowRunNotFound,
	TaskAlreadyExists, TaskInvalidName, TaskInactiveStatus, TaskNotFound, TaskInvalid, TaskInUse,
	TaskRunNotFound,
	ActionUnableToAction, ActionNotFound,
	ScheduleInvalidReq, ScheduleInvalidRunOnce, ScheduleInvalidCron, ScheduleNotFound,
	ParamsNotFound, ParamsNonUniqueReference,
	UserNotFound, InstanceLocked, UserEmailTaken, TokenNotFound,
	IntegrationInvalidSignature, IntegrationNotLinked, IntegrationAlreadyLinked,
}
