package icon

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// testPNG encodes a w×h PNG with image/png.
func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testJPEG encodes a w×h JPEG with image/jpeg.
func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.Gray{Y: 200})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngChunk encodes one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// ihdr is the body of an IHDR chunk for an 8-bit RGBA image.
func ihdr(w, h uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, w)
	b = binary.BigEndian.AppendUint32(b, h)
	return append(b, 8, 6, 0, 0, 0)
}

// craftPNG joins the signature and chunks.
func craftPNG(chunks ...[]byte) []byte {
	b := []byte(pngSig)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b
}

// hugePNG claims w×h pixels in a hand-made IHDR with a correct CRC.
func hugePNG(w, h uint32) []byte {
	return craftPNG(pngChunk("IHDR", ihdr(w, h)), pngChunk("IDAT", []byte{0x78, 0x9c, 0x03, 0, 0, 0, 0, 1}), pngChunk("IEND", nil))
}

// apng builds an animated PNG of frames frames (acTL plus one fcTL each).
func apng(frames uint32) []byte {
	actl := binary.BigEndian.AppendUint32(nil, frames)
	actl = binary.BigEndian.AppendUint32(actl, 0)
	chunks := [][]byte{pngChunk("IHDR", ihdr(16, 16)), pngChunk("acTL", actl)}
	for i := range frames {
		fctl := binary.BigEndian.AppendUint32(nil, i)
		fctl = append(fctl, make([]byte, 22)...)
		chunks = append(chunks, pngChunk("fcTL", fctl))
		if i == 0 {
			chunks = append(chunks, pngChunk("IDAT", []byte{0x78, 0x9c, 0x03, 0, 0, 0, 0, 1}))
		}
	}
	return craftPNG(append(chunks, pngChunk("IEND", nil))...)
}

// riff wraps chunks in a RIFF WEBP container.
func riff(chunks ...[]byte) []byte {
	var body []byte
	body = append(body, "WEBP"...)
	for _, c := range chunks {
		body = append(body, c...)
	}
	b := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return append(b, body...)
}

// webpChunk encodes a RIFF chunk with its padding byte.
func webpChunk(fourCC string, data []byte) []byte {
	b := append([]byte(fourCC), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	b = append(b, data...)
	if len(data)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// webpLossless is a VP8L header for a w×h image.
func webpLossless(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	return riff(webpChunk("VP8L", append([]byte{0x2f}, binary.LittleEndian.AppendUint32(nil, bits)...)))
}

// webpLossy is a VP8 key frame header for a w×h image.
func webpLossy(w, h int) []byte {
	b := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a}
	b = binary.LittleEndian.AppendUint16(b, uint16(w))
	b = binary.LittleEndian.AppendUint16(b, uint16(h))
	return riff(webpChunk("VP8 ", append(b, 0, 0)))
}

// webpAnimated is a VP8X canvas of w×h with frames ANMF chunks.
func webpAnimated(w, h, frames int) []byte {
	x := []byte{0x02, 0, 0, 0}
	x = append(x, byte(w-1), byte((w-1)>>8), byte((w-1)>>16))
	x = append(x, byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	chunks := [][]byte{webpChunk("VP8X", x), webpChunk("ANIM", make([]byte, 6))}
	for range frames {
		chunks = append(chunks, webpChunk("ANMF", make([]byte, 17)))
	}
	return riff(chunks...)
}

func toDataURI(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// wantReason fails t unless err is an *Error with reason r.
func wantReason(t *testing.T, err error, r Reason) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %q", r)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *Error %q", err, err, r)
	}
	if !errors.Is(err, r) {
		t.Fatalf("err = %v, want reason %q", err, r)
	}
	return e
}
