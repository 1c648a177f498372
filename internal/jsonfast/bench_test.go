package jsonfast

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var benchString = `"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789 .,;:-", 1<<20/42) + `"`

// BenchmarkString measures the string passes on a 1 MiB ASCII string,
// beside a plain copy of it (the floor).
func BenchmarkString(b *testing.B) {
	data := []byte(benchString)
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
		})
	}
	dst := make([]byte, 0, len(data)+16)
	run("copy", func() { dst = append(dst[:0], data...) })
	run("utf8.Valid", func() { utf8.Valid(data) })
	run("ScanString", func() { ScanString(data, 0) })
	run("Unquote", func() { _ = Unquote(data, false) })
	dense := []byte(`"` + strings.Repeat(`{\"key\": \"some value here\", \"n\": 12345678}\n`, 1<<20/50) + `"`)
	run("ScanString/escapes", func() { ScanString(dense, 0) })
	s := benchString[1 : len(benchString)-1]
	run("AppendString", func() { dst = AppendString(dst[:0], s) })
}
