package mcphttp

import (
	"cmp"
	"context"
	"time"
)

// The self-healing of sessions shared by replicas (Options.Replicas, see
// replicas.go): the news between replicas travels at most once, and the
// replica that writes a session's standalone stream may idle out or die;
// these keep every copy and that stream right within a bound.

// recheck re-reads, every interval until the handler closes, and at once
// when the carrier reports a loss, the record of each shared session the
// handler holds, and applies it as a "state"
// message would (refresh): a copy that missed a "state" or "end" message
// (delivered at most once) catches up within the interval, and one whose
// record is gone (deleted, or expired) ends. One session at a time, so
// that a directory that does not answer holds one goroutine, not one per
// session.
func (rs *replicaState) recheck(h *Handler, every time.Duration) {
	var tick <-chan time.Time // nil: never (a negative ReplicaRecheck)
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	var list []*httpSession
	for {
		select {
		case <-h.modernDone: // closed by Close
			return
		case <-tick:
		case <-rs.lost: // and at once after a loss (see onRouted)
		}
		list = list[:0]
		h.mu.Lock()
		for _, s := range h.sessions {
			if s.rep != nil {
				list = append(list, s)
			}
		}
		h.mu.Unlock()
		alive := map[string]bool{rs.self: true} // one ReplicaAlive per replica and round
		for i, s := range list {
			if h.closed.Load() {
				return
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if !closed {
				h.refresh(s)
				rs.checkOwner(h, s, alive)
				h.catchUp(s, true)
			}
			list[i] = nil // let an ended session go
		}
	}
}

// checkOwner claims the standalone stream of s if the replica that
// writes it died (kill -9: it let nothing go), so that change
// notifications go on; alive caches the answers of one round.
func (rs *replicaState) checkOwner(h *Handler, s *httpSession, alive map[string]bool) {
	owner := s.rep.standaloneOwner()
	if owner == "" {
		return // claimed already by refresh
	}
	ok, known := alive[owner]
	if !known {
		var err error
		if ok, err = rs.net.ReplicaAlive(context.Background(), owner); err != nil {
			return // ask again next round
		}
		alive[owner] = ok
	}
	if !ok {
		h.claimLead(s, owner)
	}
}

// releaseLead lets go of the standalone stream of s, whose copy here
// ended while the session lives on (it idled out, or the handler closed):
// if this replica wrote that stream, the record says now that nobody
// does, and the replicas holding a copy claim it (claimLead), so that
// the session keeps exactly one writer of change notifications.
func (h *Handler) releaseLead(s *httpSession) {
	self := h.rep.self
	if s.rep.standaloneOwner() != self {
		return
	}
	h.updateRecord(context.Background(), s, func(rec *sessionRecord) bool {
		if rec.standaloneOwner() != self {
			return false
		}
		if rec.Get == self {
			rec.Get = ""
		}
		if rec.standaloneOwner() == self {
			rec.Lead = leadVacant
		}
		return true
	})
}

// claimLead makes this replica the writer of the standalone stream of s,
// in the background, if no live replica is: the record names none (the
// last let go), or names dead, a replica found dead. Two replicas that
// claim at once both write the record; the last write wins, and each
// applies it when told (or at the next recheck).
func (h *Handler) claimLead(s *httpSession, dead string) {
	if !s.rep.claiming.CompareAndSwap(false, true) {
		return
	}
	self := h.rep.self
	go func() {
		defer s.rep.claiming.Store(false)
		h.updateRecord(context.Background(), s, func(rec *sessionRecord) bool {
			changed := false
			if dead != "" && rec.Get == dead {
				rec.Get, changed = "", true
			}
			// Unless someone live has it (perhaps this replica).
			if owner := rec.standaloneOwner(); owner == "" || owner == dead {
				rec.Lead, changed = self, true
			}
			return changed
		})
		h.log.Info("mcphttp: this replica now writes the session's standalone stream", "session", s.id, "after", cmp.Or(dead, "a replica that let it go"))
	}()
}

// takenStream is another replica's standalone stream that a GET here
// took over: the events after seq have not been sent on.
type takenStream struct {
	stream string
	seq    int64
	rounds int // rechecks since the take-over
}

// followRounds is how many rechecks a take-over follows the old stream:
// by the second, every replica has applied the record that names this one
// the writer (at its own recheck, if it missed the news), and nothing
// more is written to the old stream.
const followRounds = 2

// followTaken starts following the stream a GET took over (prior): the
// replica that wrote it may add events between the take-over's read and
// its hearing that this replica writes the stream now (the record is
// claimed after the read, and the news travels at most once). They are
// sent on this replica's standalone stream, each once: now, after the
// claim, and at the next followRounds rechecks (see recheck).
func (h *Handler) followTaken(s *httpSession, prior *priorEvents) {
	seq := prior.after
	if n := len(prior.events); n > 0 {
		seq = prior.events[n-1].Seq
	}
	s.rep.takenMu.Lock()
	s.rep.taken = &takenStream{stream: prior.stream, seq: seq}
	s.rep.takenMu.Unlock()
	h.catchUp(s, false)
}

// catchUp sends on the standalone stream of s the events of the stream
// it took over that were written since it last looked; round counts a
// recheck, the last of which stops the following.
func (h *Handler) catchUp(s *httpSession, round bool) {
	s.rep.takenMu.Lock()
	defer s.rep.takenMu.Unlock()
	t := s.rep.taken
	if t == nil {
		return
	}
	if round {
		if t.rounds++; t.rounds > followRounds {
			s.rep.taken = nil
			return
		}
	}
	events, err := h.takenAfter(context.Background(), s.id, t.stream, t.seq)
	if err != nil {
		h.log.Warn("mcphttp: events written to a stream taken over may be lost", "session", s.id, "stream", t.stream, "error", err)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	st := s.standaloneLocked()
	s.mu.Unlock()
	for _, e := range events {
		t.seq = e.Seq
		m, err := h.dec.Decode(e.Data)
		if err == nil {
			err = st.send(m, false)
		}
		if err != nil {
			h.log.Warn("mcphttp: an event of a stream taken over dropped", "session", s.id, "stream", t.stream, "error", err)
		}
	}
}

// PingsClient reports whether the session's keep-alive pings
// (mcp.ServerOptions.KeepAlive) go from this copy (see
// mcp.Server.ConnectPush): with replicas, only from the one that writes
// the standalone stream, where the pings travel anyway; otherwise the
// client would get one ping per replica holding a copy, each interval.
func (s *httpSession) PingsClient() bool {
	s.mu.Lock()
	rep := s.rep
	s.mu.Unlock()
	if rep == nil || s.h.rep == nil {
		return true
	}
	return rep.standaloneOwner() == s.h.rep.self
}

// leadVacant in sessionRecord.Lead says that no replica writes the
// session's standalone stream while no GET is open: the one that did let
// it go (its copy ended, idle, while the session lives on). The next
// replica that reads the record claims it (see claimLead).
const leadVacant = "-"

// standaloneOwner is the replica whose copy writes the session's
// standalone stream: the one holding its GET, else its lead, at first its
// home; "" while the lead is vacant.
func (rec *sessionRecord) standaloneOwner() string {
	switch {
	case rec.Get != "":
		return rec.Get
	case rec.Lead == "":
		return rec.Home
	case rec.Lead == leadVacant:
		return ""
	}
	return rec.Lead
}
