package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// A Stream carries whole messages in both directions. Read returns the next
// message, or a *DecodeError for input that is not a valid message (the Conn
// answers it and reads on); any other error ends the stream. Write must be
// safe for concurrent use, and must encode the messages it is given with
// Encode or AppendMessage (before it returns, or later): a Response that a
// Conn writes may hold its result still to be encoded (see Response).
//
// The context given to Write carries the id of the inbound request that the
// message answers or belongs to (see RequestIDFromContext), so that a
// transport with several channels, such as Streamable HTTP, can route it.
type Stream interface {
	Read(ctx context.Context) (Message, error)
	Write(ctx context.Context, m Message) error
	Close() error
}

// DefaultMaxMessageSize is the largest message a line stream reads unless
// told otherwise: 16 MiB.
const DefaultMaxMessageSize = 16 << 20

// ErrClosed is returned by operations on a closed Conn or Stream.
var ErrClosed = errors.New("jsonrpc: connection closed")

// LineStream is a Stream of newline-delimited messages, as MCP's stdio
// transport uses: one compact JSON message per line, in UTF-8. Blank lines
// are skipped. A line longer than the size limit is discarded and reported
// as a *DecodeError, after which reading goes on with the next line.
//
// When the reader has a working SetReadDeadline method, as a pipe made by
// os.Pipe or exec.Cmd.StdoutPipe, a pollable standard input and a
// net.Conn have, the stream owns the reader's read deadline: it uses it to
// give up a read when the context of the call waiting for it ends, with no
// input lost (see Conn). It clears any deadline set before. The reader
// must keep its deadlines working: calling the Fd method of an *os.File
// reader, which stops them, would leave such a call blocked until input
// comes.
type LineStream struct {
	r       *bufio.Reader
	maxSize int
	closer  io.Closer

	// The state of a line whose reading was interrupted, which the next
	// read goes on with. Only the reading goroutine uses them.
	partial  []byte // the start of the line
	skipping bool   // the line was too long: the rest of it is skipped

	// Interruption (see readInterruptible). dl is nil when the reader's
	// deadline cannot be set.
	dl          deadliner
	interruptFn func()        // s.interrupt, made once
	interrupted chan struct{} // gets a value each time interrupt has run
	imu         sync.Mutex
	reading     bool // an interruptible read runs; guarded by imu
	expired     bool // dl has a deadline in the past; guarded by imu
	closed      bool // Close was called: interruptible reads fail; guarded by imu

	wmu sync.Mutex
	w   io.Writer
	buf []byte

	closeOnce sync.Once
	closeErr  error
}

// NewLineStream returns a LineStream reading from r and writing to w. Close
// closes closer, if it is not nil. maxSize bounds the length of one message
// in bytes; zero means DefaultMaxMessageSize.
func NewLineStream(r io.Reader, w io.Writer, closer io.Closer, maxSize int) *LineStream {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	s := &LineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, closer: closer, maxSize: maxSize}
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		s.dl = d
		s.interruptFn = s.interrupt
		s.interrupted = make(chan struct{}, 1)
	}
	return s
}

// A deadliner is a reader whose reads can be given a deadline.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// An interruptibleStream is a Stream whose read can be given up when a
// context ends, losing no input: the next read goes on where the
// interrupted one stopped. A Conn lets a caller whose context can end read
// its own response only over such a stream (see Conn.background).
type interruptibleStream interface {
	Stream
	// interruptible reports whether readInterruptible works.
	interruptible() bool
	// readInterruptible is Read, except that it returns
	// errReadInterrupted if ctx ends before a whole message is read.
	readInterruptible(ctx context.Context) (Message, error)
}

// errReadInterrupted is returned by an interruptible read whose context
// ended; the stream is as good as before.
var errReadInterrupted = errors.New("jsonrpc: read interrupted")

// interruptible reports whether the reader's deadline can be set.
func (s *LineStream) interruptible() bool { return s.dl != nil }

// readInterruptible is Read, given up with errReadInterrupted when ctx
// ends: a deadline in the past makes the blocked Read of the reader
// return, and the part of the line read so far is kept for the next read.
// Close stops it too, with ErrClosed, whether or not the closer closes the
// reader. It must not be called unless interruptible reports true.
//
// The deadline is set only while this read runs, and cleared before it
// returns, so that it never touches a later read: if ctx ends too late to
// stop the interruption, the read waits for the interruption to have run
// before it clears the deadline.
func (s *LineStream) readInterruptible(ctx context.Context) (Message, error) {
	if ctx.Err() != nil {
		return nil, errReadInterrupted
	}
	s.imu.Lock()
	if s.closed {
		s.imu.Unlock()
		return nil, ErrClosed
	}
	s.reading = true
	s.imu.Unlock()
	stop := context.AfterFunc(ctx, s.interruptFn)
	m, err := s.Read(ctx)
	if !stop() {
		<-s.interrupted // started: wait for it to have run
	}
	s.imu.Lock()
	s.reading = false
	expired, closed := s.expired, s.closed
	if expired {
		s.expired = false
		err2 := s.dl.SetReadDeadline(time.Time{})
		if err == nil && err2 != nil {
			// The next read would fail: report it now, not as an
			// interruption.
			err = fmt.Errorf("jsonrpc: clear read deadline: %w", err2)
		}
	}
	s.imu.Unlock()
	if expired && err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if closed {
			return nil, ErrClosed
		}
		return nil, errReadInterrupted
	}
	return m, err
}

// interrupt sets a deadline in the past on the reader, if an
// interruptible read runs: it is the one whose context ended, as that read
// waits for interrupt to have run before it returns.
func (s *LineStream) interrupt() {
	s.imu.Lock()
	if s.reading {
		s.expireLocked()
	}
	s.imu.Unlock()
	s.interrupted <- struct{}{}
}

// expireLocked sets a deadline in the past on the reader. s.imu is held.
func (s *LineStream) expireLocked() {
	// An error leaves the read blocked, as a stream without deadlines
	// would be: there is nothing better to do.
	if s.dl.SetReadDeadline(aLongTimeAgo) == nil {
		s.expired = true
	}
}

// aLongTimeAgo is a deadline in the past, which makes a read return at
// once.
var aLongTimeAgo = time.Unix(1, 0)

// Read returns the next message. It does not watch ctx while blocked on the
// reader: close the stream to stop a pending Read.
func (s *LineStream) Read(ctx context.Context) (Message, error) {
	for {
		line, err := s.readLine()
		if len(line) > 0 {
			m, derr := Decode(line)
			if derr != nil {
				return nil, derr
			}
			return m, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine returns the next non-blank line without its terminator. The
// returned slice is owned by the caller. When the reader fails midway
// (an interrupted read's deadline), the part of the line read so far is
// kept, and the next call goes on with it.
func (s *LineStream) readLine() ([]byte, error) {
	acc := s.partial
	s.partial = nil
	for {
		if s.skipping {
			if err := s.skipLine(); err != nil {
				return nil, err
			}
			return nil, s.tooLong()
		}
		frag, err := s.r.ReadSlice('\n')
		if len(acc)+len(frag) > s.maxSize+2 {
			// Skip the rest of the line and report it.
			if errors.Is(err, bufio.ErrBufferFull) {
				s.skipping = true
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				s.skipping = true // the line has not ended
				return nil, err
			}
			return nil, s.tooLong()
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			acc = append(acc, frag...)
			continue
		}
		if acc != nil {
			acc = append(acc, frag...)
		} else if len(frag) > 0 {
			acc = append(make([]byte, 0, len(frag)), frag...)
		}
		line := bytes.TrimSpace(acc)
		if len(line) > s.maxSize {
			return nil, s.tooLong()
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return line, nil
			}
			if !errors.Is(err, io.EOF) {
				s.partial = acc
			}
			return nil, err
		}
		if len(line) > 0 {
			return line, nil
		}
		acc = acc[:0]
	}
}

// skipLine reads up to the end of the current line. It stops skipping
// once the line has ended, at its newline or the end of input.
func (s *LineStream) skipLine() error {
	for {
		_, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			s.skipping = false
			return nil
		}
		return err
	}
}

func (s *LineStream) tooLong() error {
	return &DecodeError{Err: Errorf(CodeInvalidRequest, "Invalid Request: message exceeds the limit of %d bytes", s.maxSize)}
}

// Write encodes m as one line.
func (s *LineStream) Write(ctx context.Context, m Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b, err := AppendMessage(s.buf[:0], m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = s.w.Write(b)
	if cap(b) <= 64<<10 {
		s.buf = b
	} else {
		s.buf = nil
	}
	if err != nil {
		return fmt.Errorf("jsonrpc: write: %w", err)
	}
	return nil
}

// Close closes the underlying closer once. It stops an interruptible read
// in progress (see readInterruptible).
func (s *LineStream) Close() error {
	s.imu.Lock()
	s.closed = true
	if s.reading {
		s.expireLocked()
	}
	s.imu.Unlock()
	s.closeOnce.Do(func() {
		if s.closer != nil {
			s.closeErr = s.closer.Close()
		}
	})
	return s.closeErr
}
