package main

import (
	"flag"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/taskstore"
	"github.com/mcpstack/mcpstack/store/redis"
)

// taskFlags are the bounds of the tasks `mcpstack serve` keeps (the sleep
// tool runs as one), in memory or, with --redis, in Redis.
type taskFlags struct {
	maxTasks  *int
	maxActive *int
	maxTTL    *time.Duration
}

func addTaskFlags(fs *flag.FlagSet) taskFlags {
	return taskFlags{
		maxTasks:  fs.Int("max-tasks", taskstore.DefaultMaxTasks, "keep at most `N` tasks (with --redis, per owner), finished ones going first; past it, a new task is refused"),
		maxActive: fs.Int("max-active-tasks", taskstore.DefaultMaxActivePerOwner, "let one owner have at most `N` unfinished tasks; past it, a new task is refused"),
		maxTTL:    fs.Duration("max-task-ttl", taskstore.DefaultMaxTTL, "keep a task at most `DURATION` after its creation, whatever its requestor asks"),
	}
}

func (f taskFlags) check() error {
	if *f.maxTasks < 1 || *f.maxActive < 1 || *f.maxTTL <= 0 {
		return usageErrorf("--max-tasks, --max-active-tasks and --max-task-ttl must be positive")
	}
	return nil
}

// options returns the bounds as the stores take them.
func (f taskFlags) options() taskstore.Options {
	return taskstore.Options{MaxTasks: *f.maxTasks, MaxActivePerOwner: *f.maxActive, MaxTTL: *f.maxTTL}
}

// store returns the task store: in memory, or the one shared shares.
func (f taskFlags) store(shared *sharedState) mcp.TaskStore {
	if shared != nil {
		return mcp.NewJSONTaskStore(shared.tasks)
	}
	o := f.options()
	return mcp.NewMemoryTaskStore(&mcp.MemoryTaskStoreOptions{MaxTasks: o.MaxTasks, MaxActivePerOwner: o.MaxActivePerOwner, MaxTTL: o.MaxTTL})
}

// redisOptions returns the options of the Redis task store.
func (f taskFlags) redisOptions(timeout, lease time.Duration) redis.TaskStoreOptions {
	return redis.TaskStoreOptions{Options: f.options(), Timeout: timeout, Lease: lease}
}
