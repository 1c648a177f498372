package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestScratchServe(t *testing.T) {
	if os.Getenv("SCRATCH_SERVE") == "" {
		t.Skip()
	}
	var lines []string
	for _, im := range testImpls() {
		h, _ := im.new()
		srv := httptest.NewServer(h)
		lines = append(lines, im.name+" "+srv.URL)
	}
	os.WriteFile("/tmp/scratch_urls", []byte(strings.Join(lines, "\n")), 0o644)
	time.Sleep(10 * time.Minute)
}

func TestScratchClient(t *testing.T) {
	if os.Getenv("SCRATCH_CLIENT") == "" {
		t.Skip()
	}
	b, _ := os.ReadFile("/tmp/scratch_urls")
	ctx := context.Background()
	var ts []*target
	for _, ln := range strings.Split(string(b), "\n") {
		name, url, _ := strings.Cut(ln, " ")
		tg := &target{impl: impl{name: name}, cl: newClient(url, 64, true)}
		ids, err := tg.cl.handshakes(ctx, 64, 4)
		if err != nil {
			t.Fatal(err)
		}
		tg.sessions = ids
		tg.calls(ctx, 200, 16)
		ts = append(ts, tg)
	}
	for _, c := range []int{1, 16, 64} {
		for r := 0; r < 2; r++ {
			for _, tg := range ts {
				var s []string
				for i := 0; i < 5; i++ {
					lv, err := tg.calls(ctx, 4000, c)
					if err != nil {
						t.Fatal(err)
					}
					s = append(s, fmt.Sprintf("%.0f", lv.RPS))
				}
				fmt.Println(c, tg.name, s)
			}
		}
	}
}
