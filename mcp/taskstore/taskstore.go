// Package taskstore is the seam between the MCP tasks engine (mcp.Tasks,
// which runs task-augmented requests and the 2026-07-28 tasks extension)
// and the stores that keep tasks: in memory for one process ([Memory]), or
// shared by the replicas of one server (store/redis.TaskStore). It is a
// leaf: it knows nothing of MCP's types, so that the stores under store/
// may implement it (internal/archtest lets store/ import it). A task is a
// [Record] of the few fields a store must index or check (owner, id,
// status, times), and the rest is plain JSON the store keeps as given: the
// outcome, the pending input requests and their responses.
//
// The rules a store keeps (MCP 2025-11-25 basic/utilities/tasks and the
// io.modelcontextprotocol/tasks extension of revision 2026-07-28):
//   - every method is scoped to an owner: another owner's task is
//     ErrNotFound, as is an expired one;
//   - a terminal status (completed, failed, cancelled) never changes: of a
//     cancellation and a completion racing, exactly one wins, the other
//     gets ErrTerminal; the outcome is stored once, by the Finish that won;
//   - task ids are unguessable (128 random bits), since a task may be
//     bound to nothing stronger than its id;
//   - every task expires TTL after its creation, finished or not, and the
//     tasks of an owner and of the store are bounded;
//   - a store shared by replicas never leaves a task working forever when
//     the replica running it dies: it fails it (store/redis: a lease per
//     replica), and the handler's late Finish gets ErrTerminal.
//
// mcp.NewJSONTaskStore puts a Store behind mcp.TaskOptions.Store. Package
// taskstoretest is the contract test every Store runs.
package taskstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Errors of a Store, matched with errors.Is (the mcp package's
// ErrTaskNotFound, ErrTaskTerminal, ErrInvalidCursor and ErrTooManyTasks
// are these values).
var (
	// ErrNotFound: no such task for this owner (it may have expired, or
	// belong to someone else).
	ErrNotFound = errors.New("mcp: task not found")
	// ErrTerminal: the task already reached a terminal status, which
	// never changes.
	ErrTerminal = errors.New("mcp: task is already in a terminal status")
	// ErrInvalidCursor: a List cursor the store did not issue.
	ErrInvalidCursor = errors.New("mcp: invalid cursor")
	// ErrTooMany: the store or the owner is at its limit of tasks.
	ErrTooMany = errors.New("mcp: too many tasks")
	// ErrBadStatus: a status SetStatus or Finish cannot set (SetStatus
	// takes working or input_required, Finish a terminal status).
	ErrBadStatus = errors.New("taskstore: status not allowed here")
)

// Status is a task's state, spelled as the protocol spells it.
type Status string

// The statuses of a task (MCP 2025-11-25 basic/utilities/tasks#task-status-lifecycle).
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is final: completed, failed or cancelled.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool { return s == Working || s == InputRequired || s.Terminal() }

// Record is a task as a store keeps it, less its JSON payloads.
type Record struct {
	// ID is the task's id, 128 random bits in unpadded base64url.
	ID string `json:"id"`
	// Owner is the identity the task is bound to.
	Owner string `json:"owner"`
	// Seq orders the tasks of a store by creation (List's order); it is
	// unique within a store.
	Seq uint64 `json:"seq"`
	// Status and Message are the task's state and its explanation.
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
	// Created and Updated are the times of creation and of the last
	// change.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// TTL is how long after Created the store keeps the task; never zero.
	TTL time.Duration `json:"ttl"`
	// PollInterval is the interval between polls the store suggests.
	PollInterval time.Duration `json:"poll"`
}

// A Store keeps the tasks of a server (or a client) and their outcomes.
// Implementations are safe for concurrent use by any number of goroutines
// (and, for a shared store, processes): every method may run concurrently
// with every other, on the same task too; the atomicity each promises
// holds across all of them.
//
// Who calls what: the replica running a task's handler calls Create,
// SetStatus, RequestInput, AwaitInput and Finish; any replica answering
// the requestor calls Get, Outcome, List, PendingInput, ProvideInput,
// Wait (tasks/result) and Finish with Cancelled (tasks/cancel). The
// replica running a task also Waits on it, so that a cancellation made on
// another replica ends the handler.
//
// Only Wait and AwaitInput block, until what they wait for happens or
// their context ends (a shared store may notice a change made elsewhere
// only at its next poll, within about the record's PollInterval); every
// other method returns after one round trip to the store and honours its
// context's deadline.
type Store interface {
	// Create stores a new task in status Working for owner. ttl is the
	// retention the requestor asked for (nil: none asked); the store may
	// shorten it and says what it chose in Record.TTL. It fails with
	// ErrTooMany past the store's bounds.
	Create(ctx context.Context, owner string, ttl *time.Duration) (Record, error)
	// Get returns the task.
	Get(ctx context.Context, owner, id string) (Record, error)
	// SetStatus moves a task that is not terminal to Working or
	// InputRequired; ErrTerminal for a terminal task, ErrBadStatus for
	// another status.
	SetStatus(ctx context.Context, owner, id string, status Status, message string) (Record, error)
	// Finish moves a task that is not terminal to a terminal status and
	// keeps outcome (a JSON value) as its outcome, atomically; ErrTerminal
	// for a terminal task (the outcome is then dropped), ErrBadStatus for
	// a status that is not terminal.
	Finish(ctx context.Context, owner, id string, status Status, message string, outcome json.RawMessage) (Record, error)
	// Outcome returns what Finish stored; nil for a task not yet terminal,
	// or given no outcome, or ended by the store itself (a shared store
	// fails the tasks of a runner that died; Record.Message says why).
	Outcome(ctx context.Context, owner, id string) (json.RawMessage, error)
	// Wait blocks until the task is terminal and returns it, or until ctx
	// ends (ctx's error), or the task is gone (ErrNotFound).
	Wait(ctx context.Context, owner, id string) (Record, error)
	// List returns a page of the owner's tasks, oldest first, starting
	// after cursor (empty for the first page), and the cursor of the next
	// page (empty on the last); ErrInvalidCursor for a cursor the store
	// did not issue.
	List(ctx context.Context, owner, cursor string) (tasks []Record, next string, err error)

	// RequestInput adds reqs (key → a JSON request) to the task's pending
	// input requests and moves it to InputRequired; ErrTerminal for a
	// terminal task.
	RequestInput(ctx context.Context, owner, id string, reqs map[string]json.RawMessage) (Record, error)
	// PendingInput returns the pending input requests (nil when none).
	PendingInput(ctx context.Context, owner, id string) (map[string]json.RawMessage, error)
	// ProvideInput keeps the responses whose key is pending and ignores the
	// rest; an answered key leaves the pending requests, and a task with
	// none left is Working again. A terminal task ignores them.
	ProvideInput(ctx context.Context, owner, id string, responses map[string]json.RawMessage) error
	// AwaitInput blocks until every key has a response, then removes and
	// returns them; it ends with ctx, with ErrNotFound when the task is
	// gone, or ErrTerminal when it is finished (cancelled meanwhile).
	AwaitInput(ctx context.Context, owner, id string, keys []string) (map[string]json.RawMessage, error)
}

// NewID returns a new task id: 128 random bits, unpadded base64url.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Cursor encodes a List cursor for the task of sequence seq (the last of
// a page); ParseCursor reverses it. Both stores use this form, so that a
// cursor is opaque to requestors and survives the deletion of the tasks
// around it.
func Cursor(seq uint64) string {
	var b [8]byte
	for i := range b {
		b[7-i] = byte(seq >> (8 * i))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseCursor returns the sequence number in a cursor made by Cursor;
// the empty cursor is 0. Anything else is ErrInvalidCursor.
func ParseCursor(cursor string) (uint64, error) {
	if cursor == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) != 8 {
		return 0, ErrInvalidCursor
	}
	var seq uint64
	for _, c := range b {
		seq = seq<<8 | uint64(c)
	}
	if seq == 0 {
		return 0, ErrInvalidCursor
	}
	return seq, nil
}
