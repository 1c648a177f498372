package redis

import (
	"strings"
	"testing"
)

// FuzzTaskRecord: a record read back from Redis is decoded as if
// untrusted (another version, a hand edit, a bug): whatever the fields
// hold, decodeTaskRecord returns an error or a record that keeps the
// invariants the engine relies on, and never panics. Fields are separated
// by NUL; "\x01" stands for a missing field (a nil in the reply).
func FuzzTaskRecord(f *testing.F) {
	f.Add("1\x00working\x00\x001732612345678\x001732612345678\x003600000\x001000")
	f.Add("7\x00failed\x00" + LapsedMessage + "\x001\x002\x000\x000")
	f.Add("1\x00done\x00\x001\x001\x001\x001")
	f.Add("-1\x00working\x00\x001\x001\x001\x001")
	f.Add("1\x00working\x00\x002\x001\x001\x001")
	f.Add("1\x00working\x00\x01\x001\x001\x001\x001")
	f.Add("99999999999999999999\x00cancelled\x00m\x001\x001\x001\x001")
	f.Fuzz(func(t *testing.T, data string) {
		var fields []any
		for _, s := range strings.Split(data, "\x00") {
			if s == "\x01" {
				fields = append(fields, nil)
			} else {
				fields = append(fields, s)
			}
		}
		r, err := decodeTaskRecord("o", "id", fields)
		if err != nil {
			return
		}
		if !r.Status.Valid() || r.Seq == 0 || r.Updated.Before(r.Created) || r.TTL < 0 || r.PollInterval < 0 || r.ID != "id" || r.Owner != "o" {
			t.Fatalf("decoded %q into %+v", data, r)
		}
	})
}
