package icon

import (
	"bytes"
	"testing"
)

func TestSniff(t *testing.T) {
	good := testPNG(t, 20, 10)
	badCRC := bytes.Clone(good)
	badCRC[len(pngSig)+8+12] ^= 0xff // the interlace byte of IHDR: its CRC no longer matches
	tests := []struct {
		name   string
		data   []byte
		want   Info
		reason Reason // "" for success
	}{
		{"png", good, Info{TypePNG, 20, 10, 1}, ""},
		{"jpeg", testJPEG(t, 33, 17), Info{TypeJPEG, 33, 17, 1}, ""},
		{"huge png header", hugePNG(100000, 100000), Info{TypePNG, 100000, 100000, 1}, ""},
		{"apng", apng(40), Info{TypePNG, 16, 16, 40}, ""},
		{"apng single frame", apng(1), Info{TypePNG, 16, 16, 1}, ""},
		{"apng acTL lies low", func() []byte {
			// acTL claims 1 frame but 5 fcTL chunks follow.
			b := apng(5)
			return bytes.Replace(b, pngChunk("acTL", []byte{0, 0, 0, 5, 0, 0, 0, 0}), pngChunk("acTL", []byte{0, 0, 0, 1, 0, 0, 0, 0}), 1)
		}(), Info{TypePNG, 16, 16, 5}, ""},
		{"webp lossless", webpLossless(300, 200), Info{TypeWebP, 300, 200, 1}, ""},
		{"webp lossy", webpLossy(640, 480), Info{TypeWebP, 640, 480, 1}, ""},
		{"webp animated", webpAnimated(64, 32, 7), Info{TypeWebP, 64, 32, 7}, ""},
		{"webp huge canvas", webpAnimated(1<<24, 1<<24, 1), Info{TypeWebP, 1 << 24, 1 << 24, 1}, ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="48" height="24"/>`), Info{TypeSVG, 48, 24, 1}, ""},
		{"svg units", []byte(`<svg width="1in" height="72pt"/>`), Info{TypeSVG, 96, 96, 1}, ""},
		{"svg viewBox", []byte("\ufeff<?xml version=\"1.0\"?>\n<!-- c --><svg viewBox=\"0 0 100.5,50\" width=\"100%\"/>"), Info{TypeSVG, 101, 50, 1}, ""},
		{"svg no size", []byte(`<svg/>`), Info{TypeSVG, 0, 0, 1}, ""},
		{"svg huge", []byte(`<svg width="1e300" height="5"/>`), Info{TypeSVG, 1<<31 - 1, 5, 1}, ""},
		{"svg doctype still sniffed", []byte(`<!DOCTYPE svg><svg/>`), Info{TypeSVG, 0, 0, 1}, ""},
		{"html", []byte(`<html><svg/></html>`), Info{}, ReasonType},
		{"svg in other namespace", []byte(`<svg xmlns="urn:x"/>`), Info{}, ReasonType},
		{"text before root", []byte(`<?xml version="1.0"?>hi<svg/>`), Info{}, ReasonType},
		{"gif", []byte("GIF89a\x01\x00\x01\x00"), Info{}, ReasonType},
		{"bmp", []byte("BM\x00\x00"), Info{}, ReasonType},
		{"empty", nil, Info{}, ReasonType},
		{"png signature only", []byte(pngSig), Info{}, ReasonType},
		{"png bad crc", badCRC, Info{}, ReasonType},
		{"png truncated", good[:len(good)-4], Info{}, ReasonType},
		{"png zero width", craftPNG(pngChunk("IHDR", ihdr(0, 5)), pngChunk("IEND", nil)), Info{}, ReasonType},
		{"png width over 2^31", craftPNG(pngChunk("IHDR", ihdr(1<<31, 5)), pngChunk("IEND", nil)), Info{}, ReasonType},
		{"png first chunk not IHDR", craftPNG(pngChunk("IEND", nil)), Info{}, ReasonType},
		{"png second IHDR", craftPNG(pngChunk("IHDR", ihdr(1, 1)), pngChunk("IHDR", ihdr(1, 1)), pngChunk("IEND", nil)), Info{}, ReasonType},
		{"png bad depth", craftPNG(pngChunk("IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 3, 6, 0, 0, 0}), pngChunk("IEND", nil)), Info{}, ReasonType},
		{"png chunk length huge", append([]byte(pngSig), 0xff, 0xff, 0xff, 0xff, 'I', 'H', 'D', 'R', 0, 0, 0, 0), Info{}, ReasonType},
		{"jpeg truncated", testJPEG(t, 8, 8)[:20], Info{}, ReasonType},
		{"webp riff size lies", func() []byte { b := webpLossless(1, 1); b[4] = 0xff; return b }(), Info{}, ReasonType},
		{"webp bad first chunk", riff(webpChunk("ALPH", []byte{1, 2})), Info{}, ReasonType},
		{"webp no chunks", riff(), Info{}, ReasonType},
		{"webp vp8 not key frame", func() []byte { b := webpLossy(2, 2); b[20] |= 1; return b }(), Info{}, ReasonType},
		{"webp vp8l version", func() []byte { b := webpLossless(2, 2); b[24] |= 0x20; return b }(), Info{}, ReasonType},
		{"webp animated without frames", webpAnimated(2, 2, 0), Info{}, ReasonType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sniff(tt.data)
			if tt.reason != "" {
				wantReason(t, err, tt.reason)
				return
			}
			if err != nil {
				t.Fatalf("Sniff: %v", err)
			}
			if got != tt.want {
				t.Errorf("Sniff = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func BenchmarkSniff(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"PNG", testPNG(b, 256, 256)},
		{"JPEG", testJPEG(b, 256, 256)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sniff(bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
