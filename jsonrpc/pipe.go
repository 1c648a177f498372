package jsonrpc

import (
	"context"
	"sync"
)

// NewPipe returns two connected in-memory streams: what one writes, the
// other reads. Messages are encoded and decoded on the way, so a pipe
// exercises the codec as a real transport would. It is meant for tests and
// for running a client and a server in one process.
func NewPipe() (Stream, Stream) {
	ab := make(chan []byte, 64)
	ba := make(chan []byte, 64)
	done := make(chan struct{})
	var once sync.Once
	closeFn := func() { once.Do(func() { close(done) }) }
	return &pipeEnd{in: ba, out: ab, done: done, close: closeFn},
		&pipeEnd{in: ab, out: ba, done: done, close: closeFn}
}

type pipeEnd struct {
	in, out chan []byte
	done    chan struct{}
	close   func()
}

func (p *pipeEnd) Read(ctx context.Context) (Message, error) {
	select {
	case b := <-p.in:
		return Decode(b)
	case <-p.done:
		// Deliver what was written before the close.
		select {
		case b := <-p.in:
			return Decode(b)
		default:
		}
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeEnd) Write(ctx context.Context, m Message) error {
	b, err := Encode(m)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	select {
	case p.out <- b:
		return nil
	case <-p.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeEnd) Close() error {
	p.close()
	return nil
}
