// Generated from policy-schemas/*.schema.json by `npm run gen:types`. Do not edit.

/* eslint-disable */

/**
 * Body of POST /v1/tenants/:tenant/approvals/:id/approve and …/deny: a person's reason, kept in the audit log and shown with the request.
 */

export interface ApprovalDecision {
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
reason: string
}

/**
 * Query parameters of GET /v1/tenants/:tenant/approvals: `state` filters (`decided` = approved or denied); pages go newest first and `cursor` is the previous page's `nextCursor`.
 */

export interface ApprovalQuery {
state?: ("pending" | "decided" | "approved" | "denied" | "expired")
/**
 * The previous page's `nextCursor`: `<requestedAt>_<id>` of its last request.
 */
cursor?: string
limit?: string
}

/**
 * Proof that a person approved one exact call: `signature` is a detached compact JWS (`typ: toolgate-approval+jws`, EdDSA, by an `active` key of the key set) over the RFC 8785 bytes of `payload`. A runtime verifies it offline with the key set it trusts and allows that call once, before `payload.expiresAt`.
 */

export interface ApprovalReceipt {
payload: ApprovalReceiptPayload
signature: string
}

export interface ApprovalReceiptPayload {
format: "toolgate.approval/v1"
tenant: string
id: string
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
tool: string
argumentsDigest: string
/**
 * The audit actor of the person who approved (`user:<sub>` or `token:<id>`).
 */
approvedBy: string
approvedAt: string
expiresAt: string
}

/**
 * Body of POST /v1/tenants/:tenant/approvals: a runtime asks a person to approve one exact call that its bundle answered `require_approval`. The arguments are shown to the people who may decide and deleted once the request is decided or expires; the receipt binds the approval to their RFC 8785 digest.
 */

export interface ApprovalRequestCreate {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
tool: string
/**
 * The call's arguments, exactly as the runtime will call the tool (at most 64 KiB as RFC 8785 JSON).
 */
arguments: {

}
/**
 * Which rule asked for the approval: a constraint's reason, or the effect a role's `requireApproval` names.
 */
reason: string
/**
 * The bundle version that answered `require_approval`.
 */
bundleVersion?: (number | null)
/**
 * The runtime's id of the call, for its own records.
 */
toolCallId?: string
}

export type ApprovalId = string

export type ApprovalState = ("pending" | "approved" | "denied" | "expired")

/**
 * One approval request as the API answers it. `arguments` are present only while the request is pending and only to those who may decide it (or the runtime that asked); they are deleted once it is decided or expires. `receipt` is present once approved.
 */

export interface Approval {
id: ApprovalId
tenant: string
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
tool: string
/**
 * `sha256:<hex>` of the RFC 8785 JSON of the arguments.
 */
argumentsDigest: string
arguments?: {

}
/**
 * Which rule asked.
 */
reason: string
bundleVersion: (number | null)
toolCallId?: string
requestedAt: string
/**
 * When a still-pending request expires.
 */
expiresAt: string
/**
 * The audit actor that opened the request (a runtime token).
 */
requestedBy: string
state: ApprovalState
decidedBy?: string
decidedAt?: string
decisionReason?: string
receipt?: ApprovalReceipt
}
/**
 * Proof that a person approved one exact call: `signature` is a detached compact JWS (`typ: toolgate-approval+jws`, EdDSA, by an `active` key of the key set) over the RFC 8785 bytes of `payload`. A runtime verifies it offline with the key set it trusts and allows that call once, before `payload.expiresAt`.
 */

/**
 * Query parameters of GET /v1/audit/checkpoints (newest first). `cursor` is the `nextCursor` of the previous page.
 */

export interface AuditCheckpointQuery {
cursor?: string
limit?: string
}

/**
 * A signed head of the audit chain, as GET /v1/audit/checkpoints lists it and as an auditor keeps it. `signature` is a detached JWS (typ toolgate-audit-checkpoint+jws, an active signing key of the key set) over the RFC 8785 bytes of the other four fields.
 */

export interface AuditCheckpoint {
format: "toolgate.audit-checkpoint/v1"
/**
 * The last event the checkpoint covers.
 */
seq: number
/**
 * That event's hash.
 */
hash: string
at: string
signature: string
}

/**
 * One change, chained: hash = sha256(prevHash ‖ RFC 8785 canonical JSON of the event without `hash`), both as lowercase hex.
 */

export interface AuditEvent {
seq: number
at: string
/**
 * `token:<id>` of who made the change, `user:<sub>` of a person signed in through single sign-on (sub = the identity provider's subject), or `system`.
 */
actor: string
/**
 * The person's email from their ID token when the actor is a `user:`; absent otherwise (absent fields are not hashed, so older events keep their hashes).
 */
actorEmail?: (string | null)
/**
 * The person's name from their ID token when the actor is a `user:`; absent otherwise.
 */
actorName?: (string | null)
action: ("create" | "update" | "delete" | "publish" | "rollback" | "sync" | "approve" | "rotate" | "promote" | "retire" | "sign" | "refuse" | "request" | "reject")
entityType: ("tool" | "group" | "state" | "tenant" | "policy" | "grant" | "mcp-server" | "token" | "bundle" | "key" | "keyset" | "tests" | "sso-mapping" | "session" | "approval" | "publish-request")
entityId: string
tenant: (string | null)
/**
 * The entity before the change, or null.
 */
before: {
[k: string]: unknown
}
/**
 * The entity after the change, or null.
 */
after: {
[k: string]: unknown
}
reason: (string | null)
requestId: (string | null)
prevHash: string
hash: string
}

/**
 * Query parameters of GET /v1/audit and /v1/audit/export. `from` is inclusive, `to` exclusive; `cursor` is the `nextCursor` of the previous page, in the same `order`.
 */

export interface AuditQuery {
tenant?: string
/**
 * `token:<id>`, `user:<sub>`, `system`, or a person's email: either finds that person's events.
 */
actor?: string
entityType?: ("tool" | "group" | "state" | "tenant" | "policy" | "grant" | "mcp-server" | "token" | "bundle" | "key" | "keyset" | "tests" | "sso-mapping" | "session" | "approval" | "publish-request")
entityId?: string
action?: ("create" | "update" | "delete" | "publish" | "rollback" | "sync" | "approve" | "rotate" | "promote" | "retire" | "sign" | "refuse" | "request" | "reject")
from?: string
to?: string
cursor?: string
limit?: string
format?: ("jsonl" | "csv")
/**
 * `asc` (default): oldest first; `desc`: newest first. Export and verify always go oldest first.
 */
order?: ("asc" | "desc")
}

/**
 * Answer of GET /v1/audit/verify: whether the hash chain is intact from seq 1 and extends every checkpoint whose signature verifies (those of the database and of the static mirror's audit/checkpoints.jsonl), and the first broken link if not.
 */

export interface AuditVerification {
ok: boolean
/**
 * Events verified before the first broken link (all of them when ok); when a checkpoint is contradicted, the events its last matching checkpoint proves unchanged.
 */
count: number
/**
 * Hash of the last verified event.
 */
lastHash: string
firstBroken?: {
seq: number
/**
 * checkpoint_mismatch: the event at a signed checkpoint's seq holds another hash (history rewritten, even with recomputed hashes); truncated: that event is missing.
 */
reason: ("hash_mismatch" | "prev_hash_mismatch" | "seq_gap" | "malformed" | "checkpoint_mismatch" | "truncated")
message: string
checkpoint?: AuditCheckpointHead
}
/**
 * The checkpoints the chain was held to: how many have a signature that verifies under the key set (used), how many do not (ignored: anyone who can write the database could add one), and the latest used.
 */
checkpoints?: {
verified: number
unverified: number
latest?: AuditCheckpointHead
}
}
/**
 * The signed checkpoint the chain contradicts (checkpoint_mismatch, truncated).
 */

export interface AuditCheckpointHead {
seq: number
hash: string
at: string
}

export type PolicyDecision = ("allow" | "require_approval" | "deny")

/**
 * GET /v1/tenants/:tenant/bundles/:a/diff/:b: what changed from a to b. Per role, the tools the role can reach (allowed, not denied, in a permitted group, not excluded); per bound subject and tool, the policy decision (allow, require_approval or deny, before request facts, states, profiles and connections).
 */

export interface BundleDiff {
from: DiffSide
to: DiffSide
/**
 * Same revision: the same content.
 */
identical: boolean
catalog: {
added: string[]
removed: string[]
/**
 * Tools in both whose entry differs (definition, status, groups, states, gates …).
 */
changed: string[]
}
/**
 * Roles whose reachable tools changed, or that were added or removed.
 */
roles: RoleDiff[]
decisions: DecisionChange[]
}

export interface DiffSide {
/**
 * A published version, or "draft".
 */
version: (number | "draft")
revision: string
}

export interface RoleDiff {
role: string
status: ("added" | "removed" | "changed")
added: string[]
removed: string[]
}

export interface DecisionChange {
subject: string
tool: string
from: PolicyDecision
to: PolicyDecision
}

/**
 * Body of POST /v1/tenants/:tenant/bundles: compile, sign and publish the draft, or (with rollbackTo) republish an earlier version's content as a new version. The reason may come in the Toolgate-Reason header instead. Unchanged content answers the current version, unless refresh asks for a new version with a new expiry.
 */

export interface BundlePublish {
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
/**
 * An earlier version whose content to publish again.
 */
rollbackTo?: number
/**
 * Publish a new version even when the content equals the latest one's, so runtimes get a bundle with a later expiresAt.
 */
refresh?: boolean
/**
 * Publish even though policy tests fail: admin only, with a reason, audited as forced.
 */
force?: boolean
/**
 * Publish at once although the tenant's review rule asks for a second person: admin only, with a reason, audited as an emergency publish.
 */
emergency?: boolean
}

/**
 * Runtime gates, all of which must hold. Absent: [].
 */

export type Requires = RuntimeGate[]
/**
 * Conformance vectors chosen from this tenant's own data so that they tell the rules of docs/spec.md apart: sample evaluation requests with partial expectations, and sample tool calls with the decision expected. A runtime refuses a bundle whose vectors it does not reproduce.
 */

export type Conformance = (EvaluateVector | DecideVector)[]

/**
 * The previous bundle format, toolgate.bundle/v1, which runtimes still read for one release (docs/spec.md §2.6). The compiler writes toolgate.bundle/v2 (bundle.schema.json). `revision` is sha256 of the canonical bundle without version, revision, previousRevision, issuedAt and expiresAt.
 */

export interface BundleV1 {
format: "toolgate.bundle/v1"
tenant: string
/**
 * Rises by one per publish, per tenant.
 */
version: number
revision: string
previousRevision: (string | null)
issuedAt: string
expiresAt: string
catalog: {
/**
 * Every tool not removed, ordered by id. Tools that can never be visible keep only their id, pin and why.
 */
tools: (BundleV1Tool | ExcludedTool)[]
groups: BundleV1Group[]
states: BundleV1State[]
}
policy: BundleV1Policy
casbin: BundleCasbin
conformance: Conformance
index: BundleV1Index
}
/**
 * A tool that can be visible, with what runtimes need to gate, validate, redact and describe it.
 */

export interface BundleV1Tool {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
id: string
description: string
inputSchema: {

}
outputSchema?: {

}
effect: ("read_only" | "state_change" | "external_side_effect")
redaction: {
allow: string[]
}
/**
 * Items: A group name (case-sensitive).
 */
groups: string[]
/**
 * A workflow state name.
 */
state?: string
availableInStates?: string[]
requires?: Requires
parallel?: Parallel
requiresConnection: boolean
budgets?: Budgets
source?: Source
definitionHash: string
}

export interface RuntimeGate {
fact: string
in: (string | number | boolean)[]
}
/**
 * Absent: { safe: false }.
 */

export interface Parallel {
safe: boolean
resourceKey?: string
}

export interface Budgets {
maxRuntimeMs?: number
maxResultBytes?: number
}

export interface Source {
kind: ("core" | "mcp")
server?: string
originalName?: string
}
/**
 * A tool that is in the inventory but can never be visible: only its id, pin and the reason.
 */

export interface ExcludedTool {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
id: string
excluded: ("quarantined" | "disabled" | "no_redaction")
definitionHash: string
}

export interface BundleV1Group {
/**
 * A group name (case-sensitive).
 */
name: string
description: string
/**
 * Items: A group name (case-sensitive).
 */
includes: string[]
}

export interface BundleV1State {
/**
 * A workflow state name.
 */
name: string
description: string
}
/**
 * The tenant policy as compiled, with its connection grants.
 */

export interface BundleV1Policy {
roles: {
[k: string]: BundleV1Role
}
bindings: {
[k: string]: string[]
}
profiles: {
[k: string]: BundleV1Profile
}
budgets?: Budgets
bundleTtlSeconds: number
grants: BundleGrant[]
}

export interface BundleV1Role {
/**
 * Items: A group name, or `*` for every group.
 */
groups: ((string | "*") & string)[]
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
allow: string[]
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
deny: string[]
requireApproval: ("read_only" | "state_change" | "external_side_effect")[]
}

export interface BundleV1Profile {
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
enable: string[]
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
disable: string[]
}

export interface BundleGrant {
/**
 * A connection identifier as bundles and requests carry it. Bundles signed before grant ids were narrowed (grantConnectionId) may hold up to 200 characters, and they must still verify.
 */
connectionId: string
subjects: string[]
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
tools: string[]
expiresAt?: string
}
/**
 * The same allow/deny decision as a Casbin model and policy: enforce(request...) is true exactly when the tool is neither denied nor not allowed for the subject.
 */

export interface BundleCasbin {
/**
 * The model in Casbin's CONF syntax.
 */
model: string
/**
 * Rows as in a Casbin CSV policy file, first column the ptype (`p`, `g`).
 */
policy: string[][]
/**
 * The meaning of each enforce() argument, in order.
 */
request: string[]
}
/**
 * A request and what evaluate() must answer to it; only the fields given are checked.
 */

export interface EvaluateVector {
/**
 * The rules of docs/spec.md this vector exercises.
 */
rules: string[]
request: EvaluationRequest
expect: EvaluateExpectation
}
/**
 * The request; without `at` it is evaluated at 2000-01-01T00:00:00.000Z, the conformance instant (docs/spec.md R12.4).
 */

export interface EvaluationRequest {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */
groups?: ((string | "*") & string)[]
/**
 * A workflow state name.
 */
state?: string
facts?: {
[k: string]: string | number | boolean
}
profile?: string
/**
 * @maxItems 1000
 * 
 * Items: A connection identifier as bundles and requests carry it. Bundles signed before grant ids were narrowed (grantConnectionId) may hold up to 200 characters, and they must still verify.
 */
allowedConnectionIds?: string[]
/**
 * Evaluate as of this instant (grant expiry); defaults to now.
 */
at?: string
}
/**
 * A partial expectation of an evaluate() answer (the policy-test form, plus order and envelope checks).
 */

export interface EvaluateExpectation {
/**
 * The answer's roles, exactly.
 */
roles?: string[]
/**
 * The answer's expanded groups, exactly.
 */
groups?: string[]
/**
 * The answer's state, exactly.
 */
state?: string
/**
 * true: the request is rejected (group_not_permitted); false: it is not.
 */
rejected?: boolean
/**
 * The groups the rejection names, exactly and in order.
 */
rejectedGroups?: string[]
/**
 * Tool ids that must be in the answer's tools, in this relative order.
 */
visible?: string[]
/**
 * Tool id → the reason it must be filtered with.
 */
hidden?: {
[k: string]: "no_role" | "quarantined" | "disabled" | "no_redaction" | "group" | "state" | "denied" | "not_allowed" | "runtime_gate" | "profile" | "no_connection"
}
/**
 * Tool id → the decision it must be visible with.
 */
decisions?: {
[k: string]: "allow" | "require_approval"
}
/**
 * Tool id → the argument constraints it must be visible with (R6.16), exactly and in order; [] means visible with none.
 */
constraints?: {
[k: string]: ConstraintRef[]
}
/**
 * Tool ids that must be in the answer's filtered, in this relative order.
 */
filteredOrder?: string[]
/**
 * How many tools the answer lists as visible, exactly.
 */
visibleCount?: number
}
/**
 * One argument constraint of the tenant policy: the role that holds it, its position in that role's `constraints`, what happens when arguments fail it, and its reason.
 */

export interface ConstraintRef {
role: string
index: number
otherwise: ("deny" | "require_approval")
reason: string
}
/**
 * A request, one tool call decided against what it sees, and the decision expected.
 */

export interface DecideVector {
rules: string[]
request: EvaluationRequest1
call: VectorCall
expect: DecideExpectation
}
/**
 * The request; without `at` it is evaluated at 2000-01-01T00:00:00.000Z, the conformance instant (docs/spec.md R12.4).
 */

export interface EvaluationRequest1 {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */
groups?: ((string | "*") & string)[]
/**
 * A workflow state name.
 */
state?: string
facts?: {
[k: string]: string | number | boolean
}
profile?: string
/**
 * @maxItems 1000
 * 
 * Items: A connection identifier as bundles and requests carry it. Bundles signed before grant ids were narrowed (grantConnectionId) may hold up to 200 characters, and they must still verify.
 */
allowedConnectionIds?: string[]
/**
 * Evaluate as of this instant (grant expiry); defaults to now.
 */
at?: string
}

export interface VectorCall {
/**
 * Absent: the answer must carry a new UUID.
 */
toolCallId?: string
name: string
/**
 * The arguments as the JSON text a model emits (possibly not valid JSON); absent means no arguments.
 */
arguments?: string
connectionId?: string
}

export interface DecideExpectation {
decision: ("allow" | "deny" | "require_approval")
errorCode?: ("unavailable" | "policy_denied" | "invalid_json" | "validation" | "approval_invalid")
/**
 * JSON pointers into the arguments that the validation errors must include.
 */
pointers?: string[]
}
/**
 * Precomputed lookups derived from catalog and policy (globs expanded, groups closed under includes), so a runtime needs no glob matching or graph walk.
 */

export interface BundleV1Index {
/**
 * Every catalog tool id, sorted.
 */
tools: string[]
/**
 * Catalog tool ids that some profile enables, sorted: visible only under a profile that enables them.
 */
profileScoped: string[]
/**
 * Group → itself and every group it includes, transitively, sorted.
 */
groups: {
[k: string]: string[]
}
roles: {
[k: string]: BundleV1IndexRole
}
grants: BundleV1IndexGrant[]
}

export interface BundleV1IndexRole {
/**
 * Permitted groups expanded; ["*"] permits any.
 */
groups: string[]
/**
 * Catalog tool ids matching an allow glob.
 */
allow: string[]
/**
 * Catalog tool ids matching a deny glob.
 */
deny: string[]
}

export interface BundleV1IndexGrant {
connectionId: string
/**
 * Catalog tool ids the grant covers.
 */
tools: string[]
}

/**
 * One published bundle version as GET /v1/tenants/:tenant/bundles lists it: who published it, when, why, and what it holds.
 */

export interface BundleVersion {
version: number
revision: string
previousRevision: (string | null)
issuedAt: string
expiresAt: string
/**
 * The key that signed it.
 */
kid: string
/**
 * `token:<id>` of the publisher.
 */
publishedBy: string
publishedAt: string
reason: (string | null)
/**
 * For a rollback: the version whose content this republishes.
 */
rollbackOf: (number | null)
summary: BundleSummary
}

export interface BundleSummary {
/**
 * Tools in the catalog.
 */
tools: number
/**
 * Tools that can be visible to someone.
 */
callable: number
/**
 * Tools kept out: quarantined, disabled or without redaction.
 */
excluded: number
roles: number
subjects: number
grants: number
/**
 * Against the version before it (all zero for the first).
 */
changes: {
toolsAdded: number
toolsRemoved: number
decisionsChanged: number
}
}

/**
 * A tenant's compiled policy bundle, format toolgate.bundle/v2 (bundle.json, RFC 8785 canonical JSON; docs/spec.md §2). Each fact is written once: there is no index (a runtime derives globs, group closures and profile scoping from catalog and policy), input schemas used by more than one tool are written once in catalog.schemas, and members equal to their stated default are left out. `revision` is sha256 of the canonical bundle without version, revision, previousRevision, issuedAt and expiresAt.
 */

export interface Bundle {
format: "toolgate.bundle/v2"
tenant: string
/**
 * Rises by one per publish, per tenant.
 */
version: number
revision: string
previousRevision: (string | null)
issuedAt: string
expiresAt: string
catalog: {
/**
 * Every tool not removed, ascending by id. Tools that can never be visible keep only their id, pin and why.
 */
tools: (BundleTool | ExcludedTool)[]
groups: BundleGroup[]
states: BundleState[]
/**
 * Input schemas that more than one tool uses, each written once; a tool names one by its position (`inputSchemaRef`). Absent: no shared schema.
 */
schemas?: {

}[]
}
policy: BundlePolicy
casbin: BundleCasbin
/**
 * Conformance vectors chosen from this tenant's own data so that they tell the rules of docs/spec.md apart: sample evaluation requests with partial expectations, and sample tool calls with the decision expected. A runtime refuses a bundle whose vectors it does not reproduce.
 */
conformance: (EvaluateVector | DecideVector)[]
}
/**
 * A tool that can be visible, with what runtimes need to gate, validate, redact and describe it. It has exactly one of inputSchema and inputSchemaRef (a runtime refuses a tool with neither).
 */

export interface BundleTool {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
id: string
/**
 * Absent: "".
 */
description?: string
inputSchema?: {

}
/**
 * The position in catalog.schemas of this tool's input schema.
 */
inputSchemaRef?: number
outputSchema?: {

}
effect: ("read_only" | "state_change" | "external_side_effect")
redaction: {
allow: string[]
}
/**
 * Absent: ["default"]. [] is in no group at all.
 * 
 * Items: A group name (case-sensitive).
 */
groups?: string[]
/**
 * A workflow state name.
 */
state?: string
/**
 * The states the tool is available in. Absent: every state ("*", which v1 wrote for every state, is not a v2 state name).
 */
availableInStates?: string[]
/**
 * Runtime gates, all of which must hold. Absent: [].
 */
requires?: RuntimeGate[]
/**
 * Absent: { safe: false }.
 */
parallel?: {
safe: boolean
resourceKey?: string
}
/**
 * Absent: false.
 */
requiresConnection?: boolean
budgets?: Budgets
source?: {
kind: ("core" | "mcp")
server?: string
originalName?: string
}
definitionHash: string
}

export interface BundleGroup {
/**
 * A group name (case-sensitive).
 */
name: string
/**
 * Absent: "".
 */
description?: string
/**
 * The groups this one includes (not transitively). Absent: [].
 * 
 * Items: A group name (case-sensitive).
 */
includes?: string[]
}

export interface BundleState {
/**
 * A workflow state name.
 */
name: string
/**
 * Absent: "".
 */
description?: string
}
/**
 * The tenant policy as compiled, with its connection grants. Absent collections are empty.
 */

export interface BundlePolicy {
/**
 * Role name → role. Absent: {}.
 */
roles?: {
[k: string]: BundleRole
}
/**
 * Subject → role names, sorted. Absent: {}.
 */
bindings?: {
[k: string]: string[]
}
/**
 * Profile name → exact tool ids it enables and disables. Absent: {}.
 */
profiles?: {
[k: string]: BundleProfile
}
budgets?: Budgets
bundleTtlSeconds: number
/**
 * Connection grants, ascending by connectionId. Absent: [].
 */
grants?: BundleGrant[]
}
/**
 * A role as written (globs unexpanded). Every absent list is [].
 */

export interface BundleRole {
/**
 * Items: A group name, or `*` for every group.
 */
groups?: ((string | "*") & string)[]
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
allow?: string[]
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
deny?: string[]
requireApproval?: ("read_only" | "state_change" | "external_side_effect")[]
/**
 * Argument constraints: checked by decide against the arguments of each call to a tool one of `tools` matches. Absent: [].
 */
constraints?: BundleConstraint[]
approvals?: BundleApprovals
}

export interface BundleConstraint {
/**
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
tools: string[]
otherwise: ("deny" | "require_approval")
/**
 * A JSON Schema over the call's arguments, in the dialect of input schemas.
 */
arguments: {

}
reason: string
}
/**
 * Who may approve a require_approval call of this role, and how long an approval receipt holds. Absent: { by: "person", validForSeconds: 900 }; an absent member takes its default.
 */

export interface BundleApprovals {
/**
 * Absent: "person".
 */
by?: ("person" | "client")
/**
 * Absent: 900.
 */
validForSeconds?: number
}
/**
 * Absent lists are [].
 */

export interface BundleProfile {
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
enable?: string[]
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
disable?: string[]
}

/**
 * What one server replica tells the others sharing its PostgreSQL database (NOTIFY payload `{ replica, event }`), after the change it describes committed: a publish (wakes long-polls), a removed tenant or changed tokens (drop cached lookups), a new key set (re-read the keys directory), audit events appended (the leader's checkpoint rule), an approval request decided (wakes the calls waiting on it).
 */

export interface ClusterEvent {
/**
 * The sending process's random id: a replica ignores its own notifications.
 */
replica: string
event: (({
type: "published"
tenant: string
version: number
} | {
type: "tenant-removed"
tenant: string
} | {
type: "tokens-changed"
} | {
type: "keyset-changed"
} | {
type: "audit-appended"
seq: number
} | {
type: "approval-decided"
tenant: string
id: string
}) & {
type: ("published" | "tenant-removed" | "tokens-changed" | "keyset-changed" | "audit-appended" | "approval-decided")
})
}

/**
 * Which opaque connection ID which subjects or roles may use with which tools. Never a credential.
 */

export interface ConnectionGrant {
/**
 * A grant's opaque connection identifier, never a credential: 1-128 of [A-Za-z0-9._:@-], never `.` or `..` (URLs normalize those segments away, so such a grant could not be read, edited or deleted).
 */
connectionId: string
/**
 * Taken from the URL.
 */
tenant?: string
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
label?: string
/**
 * Subjects (e.g. `agent:support-bot`) or role names.
 * 
 * @minItems 1
 * @maxItems 1000
 * 
 * Items: Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subjects: [string, ...(string)[]]
/**
 * @minItems 1
 * @maxItems 1000
 * 
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
tools: [string, ...(string)[]]
expiresAt?: string
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export type Groups = ((string | "*") & string)[]

export type LoggedDecision = ("allow" | "deny" | "require_approval")
/**
 * A snake_case code: decide's errorCode (`unavailable`, `policy_denied`, `invalid_json`, `validation`, or a gateway's own such as `approval_declined`).
 */

export type DecisionCode = string
/**
 * A snake_case code: decide's errorCode (`unavailable`, `policy_denied`, `invalid_json`, `validation`, or a gateway's own such as `approval_declined`).
 */

export type DecisionCode1 = string

/**
 * Body of POST /v1/tenants/:tenant/decisions (JSON, optionally `Content-Encoding: gzip`, at most 1 MiB on the wire and decompressed). One bad record refuses the whole batch.
 */

export interface DecisionBatch {
/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */
runtimeId: string
/**
 * Records this runtime's log has dropped since it started because its ring was full (cumulative, so a retried batch does not count twice).
 */
dropped?: number
/**
 * @maxItems 20000
 */
records: DecisionRecord[]
}
/**
 * What a runtime decided for one tool call, and the evaluation request behind it. Never carries the call's arguments or the tool's output. `groups` are the requested groups as evaluated (default ["default"]); `facts` are left out when the runtime logs with `logFacts: false`.
 */

export interface DecisionRecord {
/**
 * When the runtime decided.
 */
at: string
/**
 * The call's id, the same through start and result.
 */
toolCallId: string
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
groups: Groups
/**
 * A workflow state name.
 */
state: string
profile?: string
facts?: Facts
/**
 * The tool name the call asked for (an unknown name is logged as called).
 */
tool: string
decision: LoggedDecision
errorCode?: DecisionCode
reason?: DecisionCode1
constraint?: ConstraintRef
approval?: DecisionApproval
/**
 * The bundle version that decided; null when the runtime held no good bundle.
 */
bundleVersion: (number | null)
revision?: string
}

export interface Facts {
[k: string]: string | number | boolean
}
/**
 * The argument constraint that decided the call (denied it, or asked for approval), when one did. Never the arguments.
 */

export interface DecisionApproval {
id: string
by: ("person" | "client")
}

export interface DecisionQuery {
from?: string
to?: string
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject?: string
tool?: string
decision?: LoggedDecision
errorCode?: DecisionCode
/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */
runtimeId?: string
/**
 * The previous page's `nextCursor`: `<at>_<id>` of its last record.
 */
cursor?: string
limit?: string
format?: ("jsonl" | "csv")
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

/**
 * Answer of GET /v1/tenants/:tenant/decisions/summary (same filters as the list; the window defaults to the last 24 hours): counts per decision over time, the most denied tools and subjects with why, the tenant's counters and each runtime's received and dropped records.
 */

export interface DecisionSummary {
from: string
to: string
bucketSeconds: number
buckets: DecisionBucket[]
topDeniedTools: DeniedKey[]
topDeniedSubjects: DeniedKey[]
counters: {
/**
 * Records the tenant holds now.
 */
stored: number
/**
 * Records removed to keep the tenant under TOOLGATE_DECISIONS_MAX_PER_TENANT.
 */
evicted: number
/**
 * Records removed by retention.
 */
expired: number
}
runtimes: DecisionSource[]
}

export interface DecisionBucket {
start: string
allow: number
deny: number
require_approval: number
}

export interface DeniedKey {
/**
 * The tool or the subject.
 */
key: string
calls: number
reasons: DenialReason[]
}

export interface DenialReason {
reason: string
calls: number
}

export interface DecisionSource {
/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */
runtimeId: string
received: number
dropped: number
lastBatchAt: string
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export interface StoredDecision {
/**
 * Increases with arrival; breaks ties between records decided at the same instant.
 */
id: number
/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */
runtimeId: string
receivedAt: string
/**
 * When the runtime decided.
 */
at: string
/**
 * The call's id, the same through start and result.
 */
toolCallId: string
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
groups: Groups
/**
 * A workflow state name.
 */
state: string
profile?: string
facts?: Facts
/**
 * The tool name the call asked for (an unknown name is logged as called).
 */
tool: string
decision: LoggedDecision
errorCode?: DecisionCode
reason?: DecisionCode
constraint?: ConstraintRef
approval?: DecisionApproval
/**
 * The bundle version that decided; null when the runtime held no good bundle.
 */
bundleVersion: (number | null)
revision?: string
}

/**
 * What an agent asks for: the body of simulate and the input of evaluate().
 */

export type FilterReason = ("no_role" | "quarantined" | "disabled" | "no_redaction" | "group" | "state" | "denied" | "not_allowed" | "runtime_gate" | "profile" | "no_connection")

/**
 * What evaluate() and simulate answer: the visible tools with their decision and every filtered tool with the first check it failed. When a requested group is not permitted, `rejected` names the groups and no tool is visible.
 */

export interface EvaluationResult {
roles: string[]
/**
 * The requested groups, expanded through includes.
 */
groups: string[]
state: string
tools: {
id: string
decision: ("allow" | "require_approval")
/**
 * The argument constraints of the subject's roles that name this tool, in role order then index (absent when none). evaluate cannot see arguments: decide applies them.
 */
constraints?: ConstraintRef[]
}[]
filtered: {
id: string
reason: FilterReason
}[]
rejected?: {
reason: "group_not_permitted"
groups: string[]
}
}
/**
 * One argument constraint of the tenant policy: the role that holds it, its position in that role's `constraints`, what happens when arguments fail it, and its reason.
 */

/**
 * Hex sha-256 of the key (as `sha256sum` prints it), optionally prefixed `sha256:`, so the key itself need not be stored.
 */

export type KeySha256 = string
/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export type AllowedConnectionIds = string[]

export type GatewayUpstream = (Upstream & Upstream1)

export type Upstream = ({
kind: "stdio"
command: string
/**
 * @maxItems 100
 */
args?: string[]
/**
 * Names of environment variables passed through to the server.
 * 
 * @maxItems 100
 */
env?: string[]
} | {
kind: "http"
url: string
/**
 * Sent with every request, e.g. `{ "authorization": "Bearer ${UPSTREAM_TOKEN}" }`.
 */
headers?: {
[k: string]: string
}
})

/**
 * Configuration of `toolgate gateway`: where the tenant's bundle comes from, how clients reach the gateway, who they are, and the upstream MCP servers it stands in front of. Any string may hold `${NAME}`, replaced by that environment variable's value at load time (never written back or logged).
 */

export interface GatewayConfig {
/**
 * The Toolgate server the tenant's signed bundle is pulled from. Exactly one of rootKeys and jwksFile.
 */
control: {
url: string
tenant: string
/**
 * A `runtime` token for the tenant; usually `${TOOLGATE_TOKEN}`.
 */
token: string
/**
 * Files holding the root public keys (JWK or JWKS) the key set must be signed by.
 * 
 * @minItems 1
 * @maxItems 32
 */
rootKeys?: [string, ...(string)[]]
/**
 * A file holding the signing public keys (JWKS) to trust, when no root keys are configured.
 */
jwksFile?: string
/**
 * Static mirrors (TOOLGATE_MIRROR_DIR served over HTTP) pulled from when the server cannot be reached.
 * 
 * @maxItems 32
 */
mirrors?: string[]
/**
 * Where the last good bundle is kept between restarts.
 */
cacheDir: string
/**
 * How the gateway names itself in status reports and decision logs; always starts with `gateway:` (added when missing). Default `gateway:<hostname>:<port or stdio>`.
 */
runtimeId?: string
}
/**
 * Streamable HTTP for any number of clients, or stdio for the one local client that started the gateway.
 */
listen: ({
http: {
/**
 * Default 127.0.0.1.
 */
host?: string
port: number
/**
 * Default /mcp.
 */
path?: string
/**
 * Browser origins allowed besides the gateway's own address (a request carrying any other Origin is refused).
 * 
 * @maxItems 64
 */
allowedOrigins?: string[]
}
} | {
stdio: {
/**
 * The `name` of the client entry the stdio caller is.
 */
client: string
}
})
/**
 * @minItems 1
 * @maxItems 10000
 */
clients: [GatewayClient, ...(GatewayClient)[]]
/**
 * Other ways for clients to authenticate besides their static keys.
 */
auth?: {
/**
 * The gateway as an OAuth 2.1 resource server (MCP authorization): it publishes RFC 9728 metadata naming the issuers, and takes JWT access tokens they issue for `resource` (RFC 8707), mapped to a `clients` entry by their claims. HTTP listener only.
 */
oauth: {
/**
 * The gateway's resource identifier: the public URL of its MCP endpoint as clients reach it (e.g. `https://gateway.example.com/mcp`), no fragment. Tokens must name it in `aud` unless an issuer gives its own `audience`.
 */
resource: string
/**
 * The authorization servers whose tokens are taken, each matched exactly against a token's `iss`.
 * 
 * @minItems 1
 * @maxItems 64
 */
issuers: [GatewayOAuthIssuer, ...(GatewayOAuthIssuer)[]]
/**
 * Which `clients` entry a token is: the first mapping, in this order, whose issuer (when it names one) issued the token and whose claim matches (equal to `value`, or a list claim containing it; `email` counts only with `email_verified: true`). A token no mapping matches is refused.
 * 
 * @minItems 1
 * @maxItems 10000
 */
clients: [GatewayOAuthClient, ...(GatewayOAuthClient)[]]
}
}
/**
 * The MCP servers in front of which the gateway stands, by their MCP server id in Toolgate (a tool `mcp__<id>__<name>` is served by upstream `<id>`).
 */
upstreams: {
[k: string]: GatewayUpstream
}
timeouts?: {
/**
 * Longest wait for an upstream's answer to one tools/call.
 */
callMs?: number
/**
 * Longest a tools/call that needs a person's approval is held before it is answered `approval_pending` (the same call retried after the approval goes through).
 */
approvalMs?: number
/**
 * How often every upstream's tools are listed again, besides on its tools/list_changed, so a definition changed without notice is caught and withheld (`definition_changed`).
 */
relistMs?: number
}
limits?: {
/**
 * Most open MCP 2025-11-25 sessions one client holds. Opening one more closes that client's least recently used session with no request in flight; when every one is busy, the new session is refused (429).
 */
sessionsPerClient?: number
/**
 * Most calls one client may have waiting for a person's approval at once: calls held, and approval requests opened for it still pending. All clients share the control plane's limit of pending requests per runtime token, so one client cannot take every slot. One more distinct call is refused `rate_limited` (a tool result) without opening a request or calling the upstream; the same call retried with the same arguments waits on its open request and is never refused for it.
 */
pendingApprovalsPerClient?: number
}
/**
 * GET /metrics answers only with `Authorization: Bearer <key>` (exactly one of key and keySha256); without this entry it is not served.
 */
metrics?: {
key?: string
keySha256?: KeySha256
}
}
/**
 * A client of the gateway: its key picks this entry, whose subject and request fields are what `evaluate` sees.
 */

export interface GatewayClient {
name: string
/**
 * The bearer key; at least 16 characters.
 */
key?: string
keySha256?: KeySha256
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
groups?: Groups
/**
 * The state a new session starts in (default `undefined`).
 */
state?: string
facts?: Facts
profile?: string
connections?: AllowedConnectionIds
}

export interface GatewayOAuthIssuer {
/**
 * The issuer identifier exactly as the provider writes it in `iss`.
 */
issuer: string
/**
 * The `aud` this issuer's tokens carry for the gateway when it is not `resource` (e.g. an application ID URI or `api://…`).
 */
audience?: string
/**
 * Where the issuer's signing keys are; default: `jwks_uri` of its metadata (`/.well-known/openid-configuration`, then `/.well-known/oauth-authorization-server`).
 */
jwksUri?: string
}

export interface GatewayOAuthClient {
/**
 * The issuer (one of `issuers`, exactly as written there) whose tokens this mapping takes; a token from another issuer never matches it. Required when several issuers are configured: a claim's value (a client id, a subject, a group) is only its own issuer's to give, and another issuer may hand out the same one.
 */
issuer?: string
claim: string
value: string
/**
 * The `name` of a `clients` entry.
 */
client: string
}

export interface Upstream1 {
kind: ("stdio" | "http")
}

/**
 * A named set of tools. Requesting a group grants the groups it includes, transitively.
 */

export interface Group {
/**
 * A group name (case-sensitive).
 */
name: string
description?: string
/**
 * @maxItems 64
 * 
 * Items: A group name (case-sensitive).
 */
includes?: string[]
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

export interface ImpactReport {
from: string
to: string
/**
 * Distinct logged evaluation requests replayed (at most 50,000).
 */
requests: number
/**
 * Logged calls in the window covered by those requests.
 */
calls: number
/**
 * Of those calls, the ones whose decision depends on the policy alone and so could be replayed.
 */
replayed: number
/**
 * True when the window held more distinct requests than were replayed (the most recent ones were kept).
 */
truncated: boolean
totals: ImpactCounts
/**
 * One entry per (subject, tool, from, to) that changes, most calls first.
 */
changes: {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
tool: string
from: LoggedDecision
to: LoggedDecision
/**
 * Why the draft hides the tool, when it now denies.
 */
reason?: string
calls: number
/**
 * Logged requests that change (open one in the simulator).
 */
examples: EvaluationRequest[]
}[]
/**
 * Per tool, the argument constraints whose outcome the draft would change for the logged calls: a constraint the draft adds (those calls would now be checked by it and may be denied or sent for approval, depending on arguments the log never holds) or removes (calls it checked, and may have decided, would no longer be). Compared with the bundle version each call was decided by; most calls first.
 */
constraints?: ImpactConstraintChange[]
byTool: ImpactKeyedCounts[]
bySubject: ImpactKeyedCounts[]
}

export interface ImpactCounts {
allowToDeny: number
denyToAllow: number
/**
 * Calls that were allowed or denied and would now need approval.
 */
toApproval: number
/**
 * Calls that needed approval and would now be allowed or denied.
 */
fromApproval: number
}
/**
 * What an agent asks for: the body of simulate and the input of evaluate().
 */

export interface ImpactConstraintChange {
tool: string
change: ("added" | "removed")
role: string
/**
 * The constraint's position in its role: in the draft when added, in the logged bundle when removed.
 */
index: number
otherwise: ("deny" | "require_approval")
reason: string
/**
 * Logged calls of the tool by subjects holding the role.
 */
calls: number
}

export interface ImpactKeyedCounts {
/**
 * The tool id or the subject.
 */
key: string
allowToDeny: number
denyToAllow: number
toApproval: number
fromApproval: number
}

/**
 * Body of POST /v1/tenants/:tenant/impact (may be empty): replays the distinct logged requests of [from, to) (default the 7 days before now) against the draft, or against `policy`, an unsaved tenant policy, in place of the saved one (nothing is stored).
 */

export interface ImpactRequest {
from?: string
to?: string
policy?: TenantPolicy
/**
 * Example requests kept per changed (subject, tool) pair (default 3).
 */
examples?: number
}
/**
 * Who in a tenant may call what: roles (with argument constraints and approval settings), bindings of subjects to roles, provider profiles, budgets.
 */

export interface TenantPolicy {
roles?: {
[k: string]: Role
}
/**
 * Subject → role names.
 */
bindings?: {
/**
 * @maxItems 64
 */
[k: string]: string[]
}
/**
 * Provider profiles: tools enabled or disabled when the request names the profile. Deny wins.
 */
profiles?: {
[k: string]: {
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
enable?: string[]
/**
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
disable?: string[]
}
}
budgets?: Budgets
bundleTtlSeconds?: number
/**
 * Change review: with `publish: required`, a publish becomes a publish request that another person (an admin or an editor of the tenant, never the requester) approves before it ships. Not part of the bundle.
 */
review?: {
publish: ("required" | "optional")
/**
 * People who must approve; one in this release.
 */
approvals?: number
}
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
updatedAt?: string
}

export interface Role {
/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */
groups?: ((string | "*") & string)[]
/**
 * @maxItems 1000
 * 
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
allow?: string[]
/**
 * @maxItems 1000
 * 
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
deny?: string[]
requireApproval?: ("read_only" | "state_change" | "external_side_effect")[]
/**
 * Argument constraints: checked by decide against a call's arguments, after its input schema. A failing `deny` constraint of any of the subject's roles refuses the call; otherwise a failing `require_approval` one asks a person.
 * 
 * @maxItems 100
 */
constraints?: ArgumentConstraint[]
approvals?: RoleApprovals
}
/**
 * Tool globs, a JSON Schema over the call's arguments (the input-schema dialect and limits) and what happens `otherwise`, with a reason shown to the agent and the admin.
 */

export interface ArgumentConstraint {
/**
 * @minItems 1
 * @maxItems 100
 * 
 * Items: A tool id, or a glob where `*` matches any run of characters (at most three `*`).
 */
tools: [string, ...(string)[]]
otherwise: ("deny" | "require_approval")
/**
 * A JSON Schema (2020-12) the arguments must meet.
 */
arguments: {

}
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
reason: string
}
/**
 * Who may approve a require_approval call of this role: only a person, out of band (`person`), or the MCP client's own confirmation (`client`, recorded as client_confirmed); and how long an approval receipt stays valid.
 */

export interface RoleApprovals {
by?: ("person" | "client")
validForSeconds?: number
}

/**
 * Body of POST /v1/keys/rotate, POST /v1/keys/:kid/promote and POST /v1/keys/:kid/retire. The reason may come in the Toolgate-Reason header instead. Each needs If-Match with the ETag of GET /v1/keys (the key-set version): 428 without it, 412 with the current overview when the key set changed since.
 */

export interface KeyAction {
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
/**
 * rotate only: promote the new key to signer automatically after this many seconds.
 */
promoteAfterSeconds?: number
/**
 * retire only: first re-sign, content unchanged, the latest bundle of every tenant that the key signed.
 */
reissue?: boolean
}

/**
 * GET /v1/keys: the signing keys with their status, the current key set and its roots, and whether this server holds the root key (without it, key changes need `toolgate keys … --root-key FILE`). The ETag is the key-set version (`keySet.version`), which every key change names as If-Match.
 */

export interface KeyOverview {
keys: SigningKeyInfo[]
keySet: {
version: number
issuedAt: string
expiresAt: string
}
roots: {
kid: string
/**
 * The root's private key is on this server.
 */
available: boolean
}[]
rootOnServer: boolean
}

export interface SigningKeyInfo {
kid: string
createdAt: string
status: ("next" | "active" | "retired")
/**
 * Whether this key signs new bundles now.
 */
signing: boolean
/**
 * A next key promoted automatically at this time.
 */
promoteAt?: string
/**
 * Tenants whose latest bundle this key signed: it cannot be retired while there are any.
 */
latestBundleOf: string[]
}

/**
 * RFC 7638 JWK thumbprint (base64url SHA-256).
 */

export type Kid = string
/**
 * The Ed25519 public key, base64url.
 */

export type X = string

/**
 * GET /.well-known/toolgate-keyset.json: the bundle-signing keys a runtime may trust, signed by a root key (header Toolgate-Signature: detached JWS, typ toolgate-keyset+jws). Served as RFC 8785 canonical bytes. Every change is signed again with a higher version; a runtime never accepts a version below the highest it has verified, nor one past expiresAt.
 */

export interface KeySet {
format: "toolgate.keyset/v1"
/**
 * Increases by one with every signed key set.
 */
version: number
issuedAt: string
expiresAt: string
/**
 * Signing keys. `next`: published ahead of signing; `active`: signs or signed a tenant's latest bundle; `retired`: no runtime may accept a bundle it signed.
 * 
 * @maxItems 256
 */
keys: {
kid: Kid
kty: "OKP"
crv: "Ed25519"
x: X
status: ("next" | "active" | "retired")
}[]
/**
 * The root keys that sign the key sets after this one. A key set signed by the current root that names a new root here announces a root rotation.
 * 
 * @minItems 1
 */
roots: [RootPublicKey, ...(RootPublicKey)[]]
}

export interface RootPublicKey {
kid: Kid
kty: "OKP"
crv: "Ed25519"
x: X
}

/**
 * An MCP server whose tools are imported, quarantined, into the inventory. Environment variables are named only; their values come from the Toolgate process's environment at connect time and are never stored.
 */

export interface McpServer {
id: string
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
label: string
transport: (({
kind: "stdio"
command: string
/**
 * @maxItems 100
 */
args?: string[]
/**
 * Names of environment variables passed through to the server.
 * 
 * @maxItems 100
 */
env?: string[]
} | {
kind: "http"
url: string
}) & {
kind: ("stdio" | "http")
})
/**
 * Re-sync periodically; absent means only on demand.
 */
syncIntervalSeconds?: number
lastSync?: {
at: string
ok: boolean
error?: string
added?: string[]
changed?: string[]
removed?: string[]
/**
 * Tool names that cannot form a valid tool id, with why.
 */
rejected?: {
name: string
message: string
}[]
/**
 * Imported (quarantined) tools whose input schema is outside the restricted subset, by tool id, with why; they cannot be approved as offered.
 */
flagged?: {
name: string
message: string
}[]
}
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

/**
 * Answer of GET /v1/overview: each tenant the caller reaches with its roles, subjects, published version, whether the draft differs from it (and in what: the policy, the grants, or inventory that reaches this tenant's bundle) and how far its runtimes have converged; and what needs an admin's attention across the installation. Parts the caller's role may not read are empty.
 */

export interface Overview {
tenants: TenantOverview[]
attention: {
/**
 * Tenants whose draft differs from their latest bundle (or that never published).
 */
unpublished: string[]
quarantined: {
total: number
/**
 * The first quarantined tools, by id.
 */
tools: {
id: string
server?: string
/**
 * True when an approved definition changed (not a new tool).
 */
changed?: boolean
}[]
}
failedSyncs: {
server: string
label: string
at: string
error: string
}[]
/**
 * Runtimes on an older version than their tenant's latest, or not fresh.
 */
runtimes: {
tenant: string
runtimeId: string
version: (number | null)
behind: (number | null)
health: string
lastError?: (string | null)
reportedAt: string
}[]
}
}

export interface TenantOverview {
id: string
name: string
roles: string[]
subjects: string[]
published: (null | {
version: number
publishedAt: string
})
draft: {
differs: boolean
changes: ("policy" | "grants" | "inventory")[]
/**
 * Why the draft does not compile, when it does not.
 */
compileError?: string
}
fleet: {
total: number
onLatest: number
behind: number
unhealthy: number
}
}

/**
 * Body of POST /v1/tenants/:tenant/policy/reset (If-Match: the policy's version): makes the draft policy and connection grants what published `version` carried, e.g. after rolling back to it, so the next publish does not ship the rolled-back change again. Inventory is shared between tenants and is not reset.
 */

export interface PolicyReset {
version: number
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
}

/**
 * How one policy test fared: one failure per expectation that did not hold, with its JSON pointer into the tests document (e.g. /tests/3/expect/visible/0), what was expected and what was seen instead.
 */

export interface PolicyTestOutcome {
name: string
passed: boolean
failures: PolicyTestFailure[]
}

export interface PolicyTestFailure {
pointer: string
message: string
expected: string
seen: string
}

export interface PolicyTests {
/**
 * @maxItems 1000
 */
tests: PolicyTest[]
/**
 * Taken from the URL.
 */
tenant?: string
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}
/**
 * One test: an evaluation request and the partial answer it must give. Names are unique within a tenant.
 */

export interface PolicyTest {
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
name: string
request: EvaluationRequest
expect: PolicyTestExpectation
}
/**
 * What an agent asks for: the body of simulate and the input of evaluate().
 */

export interface PolicyTestExpectation {
/**
 * @maxItems 5000
 * 
 * Items: `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
visible?: string[]
hidden?: {
/**
 * The reason the tool must be filtered with, or `any`: hidden for whatever reason (a later change of reason does not fail the test).
 */
[k: string]: "no_role" | "quarantined" | "disabled" | "no_redaction" | "group" | "state" | "denied" | "not_allowed" | "runtime_gate" | "profile" | "no_connection" | "any"
}
decisions?: {
[k: string]: "allow" | "require_approval"
}
rejected?: boolean
/**
 * Calls decided under the request, each with the decision (and, when given, the error code) decide must answer.
 * 
 * @maxItems 100
 */
calls?: PolicyTestCall[]
}
/**
 * A tool call and what decide must answer: `arguments` is the arguments object or the JSON text a model would emit (absent: no arguments); `errorCode`, when given, must be the answer's.
 */

export interface PolicyTestCall {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
name: string
arguments?: ({

} | string)
/**
 * A connection identifier as bundles and requests carry it. Bundles signed before grant ids were narrowed (grantConnectionId) may hold up to 200 characters, and they must still verify.
 */
connectionId?: string
decision: LoggedDecision
errorCode?: ("unavailable" | "policy_denied" | "invalid_json" | "validation")
}

/**
 * Every error answer: RFC 9457 application/problem+json, with one JSON pointer per problem in `errors`.
 */

export interface Problem {
type: string
title: string
status: number
code: ("validation" | "invalid_json" | "unknown_reference" | "secret_field" | "cycle" | "not_found" | "conflict" | "precondition_required" | "precondition_failed" | "unauthorized" | "forbidden" | "csrf" | "payload_too_large" | "unsupported_media_type" | "compile_error" | "group_not_permitted" | "mcp_error" | "definition_mismatch" | "method_not_allowed" | "rate_limited" | "internal" | "tests_failed" | "stale" | "runtime_id_taken")
detail?: string
errors?: {
/**
 * JSON pointer (RFC 6901) into the request body, or into the named entity.
 */
pointer: string
message: string
code?: string
}[]
/**
 * On 412: the entity as it is now, with its version.
 */
current?: {
[k: string]: unknown
}
requestId?: string
}

/**
 * Body of POST /v1/tenants/:tenant/promote: copy this tenant's roles, bindings, profiles, budgets, policy tests and grants into the draft of tenant `to` (the inventory is shared). With `?plan=1` nothing changes and the answer shows what would.
 */

export interface PromoteRequest {
to: string
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
}

export interface PromoteResult {
from: string
to: string
applied: boolean
roles: Changes
bindings: Changes
profiles: Changes
budgetsChanged: boolean
grants: Changes
tests: Changes
diff: BundleDiff
}
/**
 * Names (role, subject, profile, connection id, test name) added to, removed from and changed in the target.
 */

export interface Changes {
added: string[]
removed: string[]
changed: string[]
}
/**
 * GET /v1/tenants/:tenant/bundles/:a/diff/:b: what changed from a to b. Per role, the tools the role can reach (allowed, not denied, in a permitted group, not excluded); per bound subject and tool, the policy decision (allow, require_approval or deny, before request facts, states, profiles and connections).
 */

/**
 * Body of POST /v1/tenants/:tenant/publish-requests: ask another person to review publishing the draft (or, with rollbackTo, an earlier version's content), whatever the tenant's review rule. The reason may come in the Toolgate-Reason header instead. Under the rule, POST …/bundles opens the same request.
 */

export interface PublishRequestCreate {
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
/**
 * An earlier version whose content to publish again.
 */
rollbackTo?: number
/**
 * Ask even though policy tests fail: admin only, audited; the approval then publishes past them.
 */
force?: boolean
}

/**
 * Body of POST /v1/tenants/:tenant/publish-requests/:id/approve or …/reject. A rejection needs a reason (it may come in the Toolgate-Reason header instead).
 */

export interface PublishRequestDecision {
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
}

export interface PublishRequestList {
items: PublishRequest[]
}
/**
 * A publish under review (tenant policy `review.publish: required`): the exact draft revision (or the earlier version a rollback republishes), with the diff, impact and policy-test results the reviewer sees. Approval by another person publishes exactly this content; a draft changed since makes the request stale.
 */

export interface PublishRequest {
id: string
tenant: string
/**
 * `pending` until a reviewer decides; `published` once approved (then `publishedVersion`), `rejected` with the reviewer's reason.
 */
status: ("pending" | "published" | "rejected")
/**
 * The content revision under review.
 */
revision: string
/**
 * Set when the request republishes an earlier version's content.
 */
rollbackTo?: number
/**
 * The latest published version when the request was made (null before the first publish).
 */
basedOn: (number | null)
/**
 * Audit actor of the requester (`user:<sub>` or `token:<id>`).
 */
requestedBy: string
requestedByEmail?: (string | null)
/**
 * The requester as people know them: a token's label, a person's name.
 */
requestedByLabel?: (string | null)
requestedAt: string
/**
 * Why a change was made; kept in the audit log.
 */
reason: string
/**
 * True while pending when the tenant's draft no longer compiles to `revision`: approving it is a 409 `stale`.
 */
stale: boolean
/**
 * Policy-test failures an admin chose to publish past when asking.
 */
forced?: boolean
diff?: BundleDiff
impact?: (ImpactReport | null)
tests?: PolicyTestOutcome[]
decidedBy?: string
decidedByEmail?: (string | null)
decidedByLabel?: (string | null)
decidedAt?: string
/**
 * Why a change was made; kept in the audit log.
 */
decisionReason?: string
publishedVersion?: number
}
/**
 * What the request would change (absent from the list: GET …/publish-requests/:id answers it, with impact and tests).
 */

/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */

export type RuntimeId = string
/**
 * `fresh`: evaluating with the latest bundle the server offers; `stale`: evaluating with the last good bundle while the server is unreachable or its bundle was refused; `none`: no good bundle, every call is denied.
 */

export type Health = ("fresh" | "stale" | "none")

export type LastError = (VerifyCode | TransportCode)
/**
 * Why a runtime refused a bundle (verifyBundle) or the key set it was to be checked against (verifyKeySet, `keyset_*`); one code per reason.
 */

export type VerifyCode = ("bad_signature" | "unknown_kid" | "retired_key" | "tenant_mismatch" | "rollback" | "expired" | "issued_in_future" | "revision_mismatch" | "conformance_failed" | "malformed" | "keyset_untrusted_root" | "keyset_bad_signature" | "keyset_rollback" | "keyset_expired" | "keyset_malformed")
/**
 * Why a runtime could not get a bundle at all.
 */

export type TransportCode = ("unreachable" | "unauthorized" | "not_found" | "server_error")

/**
 * What a runtime reports to POST /v1/tenants/:tenant/runtimes/status: the bundle version it runs, its health and why it last refused a bundle or failed to reach the server.
 */

export interface RuntimeStatus {
runtimeId: RuntimeId
/**
 * The bundle version the runtime evaluates with; null when it holds no good bundle.
 */
version: (number | null)
revision?: string
health: Health
lastError?: LastError
/**
 * A human-readable note on lastError.
 */
detail?: string
}

/**
 * One runtime as GET /v1/tenants/:tenant/runtimes lists it: its last report and when the server received it.
 */

export interface Runtime {
tenant: string
/**
 * Chosen by the runtime; stable across restarts of the same process or host.
 */
runtimeId: string
version: (number | null)
revision?: (string | null)
/**
 * `fresh`: evaluating with the latest bundle the server offers; `stale`: evaluating with the last good bundle while the server is unreachable or its bundle was refused; `none`: no good bundle, every call is denied.
 */
health: ("fresh" | "stale" | "none")
lastError?: ((("bad_signature" | "unknown_kid" | "retired_key" | "tenant_mismatch" | "rollback" | "expired" | "issued_in_future" | "revision_mismatch" | "conformance_failed" | "malformed" | "keyset_untrusted_root" | "keyset_bad_signature" | "keyset_rollback" | "keyset_expired" | "keyset_malformed") | ("unreachable" | "unauthorized" | "not_found" | "server_error")) | null)
detail?: (string | null)
reportedAt: string
/**
 * How many versions behind the tenant's latest bundle; null when unknown.
 */
behind?: (number | null)
/**
 * Decision records this runtime's log dropped because its ring was full, as its last decision batch reported (cumulative since it started); absent when it never sent one.
 */
decisionsDropped?: number
}

/**
 * Body of POST /v1/session: the console logs in with an API token and gets an HttpOnly session cookie.
 */

export interface SessionCreate {
token: string
}

export type TokenRole = ("admin" | "editor" | "viewer" | "auditor" | "runtime")

/**
 * Answer of POST and GET /v1/session: who is logged in, and the CSRF token every change made with the session cookie must send as X-CSRF-Token.
 */

export interface Session {
/**
 * Null for a person signed in through single sign-on.
 */
tokenId: (string | null)
/**
 * The person signed in through single sign-on; absent for token sign-in.
 */
user?: {
/**
 * `user:<sub>`, as in the audit trail.
 */
id: string
email: (string | null)
name: (string | null)
}
/**
 * For a person: the role held in each tenant reached through editor/viewer mappings (see SsoAccess).
 */
tenantRoles?: {
[k: string]: string
}
label: string
/**
 * Who this session acts as in the audit trail and on approval requests (`requestedBy`, `decidedBy`): `user:<sub>` for a person, `token:<id>` for a token. Whoever asked for an approval never decides it.
 */
actor: string
/**
 * True when single sign-on is configured and this session is not a person signed in through it: the server then refuses its approval decisions (403) whatever `permissions` lists for `approval`, which follows the role rules alone.
 */
approvalsNeedPerson: boolean
role: TokenRole
/**
 * Tenants the token reaches; empty for admin and auditor (every tenant).
 */
tenants: string[]
/**
 * Null on GET when the request was made with a bearer token, not a session cookie.
 */
csrfToken: (string | null)
permissions: SessionPermissions
}
/**
 * What the session may do, decided by the server's role rules (the same the API enforces), so a client needs no rules of its own. A resource with no allowed action is left out. `actions`: What the session's role may do: on global resources, and on tenant-scoped ones (tenant, policy, grant, bundle, runtime, simulate, decision, approval) in every tenant it reaches except those listed in `tenants`. `tenants`: For a person holding another role in some tenants (see `tenantRoles`): what they may do on tenant-scoped resources there.
 */

export interface SessionPermissions {
/**
 * Whether the session reaches every tenant (admin, auditor); otherwise only those in `tenants` of the session and in `permissions.tenants`.
 */
everyTenant: boolean
actions: AllowedActions
tenants: {
[k: string]: AllowedActions
}
}
/**
 * Resource → the actions allowed on it.
 */

export interface AllowedActions {
[k: string]: ("read" | "write" | "publish" | "force" | "pull" | "report" | "export" | "run" | "request" | "decide")[]
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export type Tests = PolicyTest[]

/**
 * Body of POST /v1/tenants/:tenant/simulate: an EvaluationRequest, optionally with `policy`, an unsaved tenant policy to evaluate in place of the saved draft (nothing is stored). Without `policy` the body is exactly an EvaluationRequest. `tests`, when given, are unsaved policy tests to run in place of the saved ones (for live results while they are edited). `calls`, when given, are sample tool calls decided under the request.
 */

export interface SimulateRequest {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
groups?: Groups
/**
 * A workflow state name.
 */
state?: string
facts?: Facts
profile?: string
allowedConnectionIds?: AllowedConnectionIds
/**
 * Evaluate as of this instant (grant expiry); defaults to now.
 */
at?: string
policy?: TenantPolicy
tests?: Tests
/**
 * Sample calls to decide under the request, each answered in `calls` with its decision and the argument constraint that decided.
 * 
 * @maxItems 50
 */
calls?: SampleCall[]
}

export interface SampleCall {
name: string
arguments?: ({

} | string)
/**
 * A connection identifier as bundles and requests carry it. Bundles signed before grant ids were narrowed (grantConnectionId) may hold up to 200 characters, and they must still verify.
 */
connectionId?: string
}

export type Roles = string[]
/**
 * The requested groups, expanded through includes.
 */

export type Tools = {
id: string
decision: ("allow" | "require_approval")
/**
 * The argument constraints of the subject's roles that name this tool, in role order then index (absent when none). evaluate cannot see arguments: decide applies them.
 */
constraints?: ConstraintRef[]
}[]

export type Filtered = {
id: string
reason: ("no_role" | "quarantined" | "disabled" | "no_redaction" | "group" | "state" | "denied" | "not_allowed" | "runtime_gate" | "profile" | "no_connection")
}[]

export interface SimulateResult {
roles: Roles
groups: Groups
state: string
tools: Tools
filtered: Filtered
rejected?: Rejected
tests?: PolicyTestOutcome[]
/**
 * One answer per sample call of the request, in order (absent when it sent none).
 */
calls?: SampleCallOutcome[]
}
/**
 * One argument constraint of the tenant policy: the role that holds it, its position in that role's `constraints`, what happens when arguments fail it, and its reason.
 */

export interface Rejected {
reason: "group_not_permitted"
groups: string[]
}
/**
 * How one policy test fared: one failure per expectation that did not hold, with its JSON pointer into the tests document (e.g. /tests/3/expect/visible/0), what was expected and what was seen instead.
 */

export interface SampleCallOutcome {
name: string
decision: LoggedDecision
errorCode?: DecisionCode
message?: string
errors?: {
pointer: string
message: string
}[]
constraint?: ConstraintRef
}

/**
 * Runtime is not a role a person signs in with.
 */

export type SsoRole = ("admin" | "editor" | "viewer" | "auditor")

/**
 * What a set of ID-token claims gives under the current mappings (answer of POST /v1/sso/mappings/preview, and of a person's session). `role` is the strongest role held; `tenantRoles` the role in each tenant reached through editor/viewer mappings (it wins over `role` for that tenant when `role` is editor or viewer, and adds to it when `role` is admin or auditor). `tenants` is null when every tenant is reached. `access` false: no mapping matched and sign-in is refused.
 */

export interface SsoAccess {
access: boolean
role: (SsoRole | null)
tenants: (string[] | null)
tenantRoles: {
[k: string]: "editor" | "viewer"
}
/**
 * Ids of the mappings that matched.
 */
mappings: string[]
}

/**
 * Runtime is not a role a person signs in with.
 */

export interface SsoMapping {
/**
 * Names the mapping in URLs and the audit trail. A POST may leave it out: the server then names the mapping after its role and value (`admin-platform-admins`), with `-2`, `-3`… when that name is taken.
 */
id: string
/**
 * A top-level ID-token claim, e.g. `groups`, `email`, `hd`.
 */
claim: string
/**
 * Compared exactly (case-sensitive) with the claim, or with each entry of a list claim.
 */
value: string
role: SsoRole
/**
 * @minItems 1
 * @maxItems 1000
 */
tenants?: [string, ...(string)[]]
description?: string
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

/**
 * Body of POST /v1/sso/mappings/preview: a set of ID-token claims (as the identity provider would send them) to check against the current mappings.
 */

export interface SsoPreview {
claims: {

}
}

/**
 * A workflow state. `undefined` always exists and is the initial state; transitions come from tools' `state` fields.
 */

export interface State {
/**
 * A workflow state name.
 */
name: string
description?: string
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export interface SubjectOverview {
/**
 * Who calls: an agent or user identifier such as `agent:support-bot` or `user:alice@example.com`. Subjects go verbatim into the bundle's Casbin rows, which other languages load as CSV lines, so they hold no whitespace, control characters, commas, quotes, parentheses, `#` or backslashes.
 */
subject: string
tenants: {
tenant: string
name: string
roles: string[]
/**
 * The groups simulated: every group the subject's roles permit (`*` for a role that permits any).
 */
groups: string[]
/**
 * The simulation on the draft; null when the draft does not compile.
 */
sees: (EvaluationResult | null)
/**
 * The subject's newest logged decisions (at most 20); null when the caller may not read decisions of this tenant.
 */
recentDecisions: (StoredDecision[] | null)
}[]
}
/**
 * What evaluate() and simulate answer: the visible tools with their decision and every filtered tool with the first check it failed. When a requested group is not permitted, `rejected` names the groups and no tool is visible.
 */

export interface ConstraintRef1 {
role: string
index: number
otherwise: ("deny" | "require_approval")
reason: string
}

/**
 * Who in a tenant may call what: roles (with argument constraints and approval settings), bindings of subjects to roles, provider profiles, budgets.
 */

/**
 * A tenant: one policy, its grants and its bundles. `policy` may be given on creation; afterwards it is edited at /v1/tenants/:tenant/policy.
 */

export interface Tenant {
id: string
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
name: string
policy?: TenantPolicy
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}
/**
 * Who in a tenant may call what: roles (with argument constraints and approval settings), bindings of subjects to roles, provider profiles, budgets.
 */

export interface TokenCreate {
/**
 * A label or name a person reads: no control characters (they would reach terminals and CSV viewers from the audit log) and no bidirectional overrides.
 */
label: string
role: TokenRole
/**
 * @maxItems 1000
 */
tenants?: string[]
/**
 * When the token stops working (RFC 3339, in the future); absent = it never expires.
 */
expiresAt?: string
}

export interface Token {
id: string
label: string
role: TokenRole
tenants: string[]
/**
 * Only in the answer to POST /v1/tokens.
 */
token?: string
createdAt: string
lastUsedAt?: (string | null)
/**
 * When the token stops working; null = never.
 */
expiresAt?: (string | null)
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
}

/**
 * Body of POST /v1/tools/:id/approve: the definition hash the admin reviewed (it must be the tool's current one) and, optionally, what the admin decides for the tool at the same time: its effect (an MCP server's own hints are never trusted for it), its redaction allowlist and its groups. Approval and these changes are one audited change.
 */

export interface ToolApprove {
definitionHash: string
effect?: ("read_only" | "state_change" | "external_side_effect")
redaction?: Redaction
/**
 * @maxItems 64
 * 
 * Items: A group name (case-sensitive).
 */
groups?: string[]
/**
 * Why a change was made; kept in the audit log.
 */
reason?: string
}
/**
 * Output field paths kept for UI and telemetry; everything else is stripped. Without it the tool never enters a bundle.
 */

export interface Redaction {
/**
 * @maxItems 256
 */
allow: string[]
}

/**
 * Answer of GET /v1/tools: the matching tools (one page of them when `limit` was given), how many match in all, and how many of those are quarantined or have no redaction allowlist. `nextCursor` is null on the last page.
 */

export interface ToolList {
items: Tool[]
total: number
counts: {
quarantined: number
noRedaction: number
}
nextCursor: (string | null)
}
/**
 * One inventory entry: a tool an agent may be allowed to call.
 */

export interface Tool {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
id: string
description: string
/**
 * JSON Schema of the arguments: 2020-12 (draft-07 where `$schema` names it), an object schema, with the vocabulary real MCP servers emit (anyOf/oneOf/allOf/not, if/then/else, patternProperties, $defs with local $ref). Refused: remote or non-pointer $ref, $dynamicRef/$recursiveRef, nested $id or anchors, patterns outside RE2 (linear time), nesting deeper than 64 levels, a `connectionId` property at any depth.
 */
inputSchema: {

}
outputSchema?: {

}
effect: ("read_only" | "state_change" | "external_side_effect")
/**
 * Output field paths kept for UI and telemetry; everything else is stripped. Without it the tool never enters a bundle.
 */
redaction?: {
/**
 * @maxItems 256
 */
allow: string[]
}
/**
 * @maxItems 64
 * 
 * Items: A group name (case-sensitive).
 */
groups?: string[]
/**
 * The state to move to after a successful call.
 */
state?: string
/**
 * States in which the tool is available; absent or containing `*` means every state.
 * 
 * @maxItems 64
 */
availableInStates?: ((string | "*") & string)[]
/**
 * Runtime gates; all must hold on the request's facts.
 * 
 * @maxItems 32
 */
requires?: {
fact: string
/**
 * @minItems 1
 * @maxItems 64
 */
in: [(string | number | boolean), ...((string | number | boolean))[]]
}[]
parallel?: {
safe: boolean
resourceKey?: string
}
requiresConnection?: boolean
budgets?: Budgets
status?: ("active" | "quarantined" | "disabled" | "removed")
/**
 * Where the tool came from. Set by the server: `core` for tools created through the API, `mcp` for imported ones.
 */
source?: {
kind: ("core" | "mcp")
server?: string
originalName?: string
/**
 * The definition hash an admin last approved; a sync that sees another one quarantines the tool.
 */
approvedDefinitionHash?: string
/**
 * What the MCP server's annotations claim about the tool. Hints from an untrusted party, shown to the admin; never used: an imported tool arrives as external_side_effect and the admin sets its effect.
 */
hints?: {
readOnlyHint?: boolean
destructiveHint?: boolean
idempotentHint?: boolean
openWorldHint?: boolean
}
}
/**
 * sha-256 of the canonical definition (name, description, inputSchema, outputSchema). Set by the server.
 */
definitionHash?: string
/**
 * For a quarantined imported tool: the definition last approved (absent for a new tool) and the one now offered.
 */
review?: {
previous?: McpDefinition
current: McpDefinition
detectedAt: string
/**
 * Where the offered input schema leaves the restricted subset; such a tool cannot be approved until the server changes it.
 */
problems?: {
pointer: string
message: string
}[]
}
/**
 * Optimistic-concurrency version of the entity; sent as the ETag. Set by the server.
 */
version?: number
createdAt?: string
updatedAt?: string
}

export interface McpDefinition {
name: string
description?: string
inputSchema: {

}
outputSchema?: {

}
definitionHash: string
}

/**
 * Query parameters of GET /v1/tools: `q` searches id, description and an imported tool's original name; `source` is `core`, `mcp` or an MCP server id; `redaction=none` keeps only tools without a redaction allowlist (never in a bundle). Without `limit` every matching tool is answered in one list; with it, a page of at most `limit` tools and a `nextCursor` to pass as `cursor` (with the same filters and sort) for the next one.
 */

export interface ToolQuery {
q?: string
/**
 * A group name (case-sensitive).
 */
group?: string
effect?: ("read_only" | "state_change" | "external_side_effect")
status?: ("active" | "quarantined" | "disabled" | "removed")
source?: string
redaction?: ("none" | "set")
sort?: ("id" | "effect" | "status" | "source" | "updatedAt")
order?: ("asc" | "desc")
limit?: string
cursor?: string
}

/**
 * @maxItems 64
 * 
 * Items: A group name, or `*` for every group.
 */

export interface ToolUsage {
/**
 * `<namespace>__<name>`: characters [A-Za-z0-9_-], at most 64 (the providers' function-name limit). Case-sensitive.
 */
tool: string
tenants: {
tenant: string
name: string
/**
 * Why the tool enters no bundle of this tenant whatever the roles say (`missing` when the draft does not compile or the tool is removed); null when it may.
 */
excluded: ("quarantined" | "disabled" | "no_redaction" | "missing" | null)
roles: {
role: string
/**
 * `allow` or `require_approval` when the role reaches the tool; `denied` (a deny glob matches), `not_allowed` (no allow glob matches) or `group` (none of the tool's groups is the role's) otherwise.
 */
outcome: ("allow" | "require_approval" | "denied" | "not_allowed" | "group")
/**
 * The role's argument constraints that name the tool.
 */
constraints: {
index: number
reason: string
otherwise: ("deny" | "require_approval")
}[]
}[]
/**
 * Bound subjects with a role that reaches the tool.
 */
subjects: string[]
/**
 * The newest logged decisions on the tool (at most 20); null when the caller may not read decisions of this tenant.
 */
recentDecisions: (StoredDecision[] | null)
}[]
}
/**
 * A decision record as GET /v1/tenants/:tenant/decisions lists it and the export writes it: the record the runtime sent, with the server's id, the runtime that sent it and when it arrived.
 */

/**
 * One inventory entry: a tool an agent may be allowed to call.
 */
