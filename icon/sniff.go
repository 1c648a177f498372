package icon

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"hash/crc32"
	"image/jpeg"
	"math"
	"strconv"
	"strings"
)

// The image types that the package knows. PNG and JPEG are always allowed;
// WebP and SVG only when a [Fetcher]'s [Options] say so.
const (
	TypePNG  = "image/png"
	TypeJPEG = "image/jpeg"
	TypeWebP = "image/webp"
	TypeSVG  = "image/svg+xml"
)

const (
	svgNS   = "http://www.w3.org/2000/svg"
	xlinkNS = "http://www.w3.org/1999/xlink"
	xmlNS   = "http://www.w3.org/XML/1998/namespace"
)

// Info is what [Sniff] learns from an image's header.
type Info struct {
	// MIMEType is one of TypePNG, TypeJPEG, TypeWebP and TypeSVG.
	MIMEType string
	// Width and Height are the pixel dimensions that the header declares.
	// For SVG they come from the root's width and height (absolute units) or
	// else its viewBox, and are zero when neither gives them.
	Width, Height int
	// Frames is the number of frames: 1 for a still image, more for an
	// animated PNG (the larger of acTL's frame count and the number of fcTL
	// chunks) or an animated WebP (the number of ANMF chunks).
	Frames int
}

// Sniff detects the type of data from its magic bytes (not from any
// declared type) and reads the dimensions and frame count from the format's
// header, without decoding pixels. PNG chunks are walked to IEND with their
// CRCs checked; JPEG is read up to its frame header; WebP's RIFF chunks are
// walked (VP8, VP8L and VP8X headers are parsed here); SVG is recognised by
// an svg root element. Anything else, and any corrupt header, gives an
// [*Error] with [ReasonType].
func Sniff(data []byte) (Info, error) {
	switch {
	case bytes.HasPrefix(data, []byte(pngSig)):
		return sniffPNG(data)
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return sniffJPEG(data)
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return sniffWebP(data)
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		return Info{}, refuse(ReasonType, "GIF is not in the allowlist")
	}
	if looksLikeMarkup(data) {
		return sniffSVG(data)
	}
	return Info{}, refuse(ReasonType, "unknown image type")
}

const (
	pngSig  = "\x89PNG\r\n\x1a\n"
	utf8BOM = "\xef\xbb\xbf"
)

func sniffPNG(data []byte) (Info, error) {
	corrupt := func(what string) (Info, error) {
		return Info{}, refuse(ReasonType, "corrupt PNG: %s", what)
	}
	info := Info{MIMEType: TypePNG, Frames: 1}
	rest := data[len(pngSig):]
	fcTL := 0
	for first := true; ; first = false {
		if len(rest) < 12 {
			return corrupt("truncated before IEND")
		}
		n := binary.BigEndian.Uint32(rest[:4])
		if n > math.MaxInt32 || uint64(n) > uint64(len(rest)-12) {
			return corrupt("chunk length out of range")
		}
		typ := string(rest[4:8])
		body := rest[8 : 8+n]
		if crc32.ChecksumIEEE(rest[4:8+n]) != binary.BigEndian.Uint32(rest[8+n:12+n]) {
			return corrupt("bad CRC in " + strconv.Quote(typ))
		}
		rest = rest[12+n:]
		if first != (typ == "IHDR") {
			return corrupt("IHDR is not the first chunk")
		}
		switch typ {
		case "IHDR":
			if n != 13 {
				return corrupt("IHDR length")
			}
			w, h := binary.BigEndian.Uint32(body[0:4]), binary.BigEndian.Uint32(body[4:8])
			if w == 0 || h == 0 || w > math.MaxInt32 || h > math.MaxInt32 {
				return corrupt("dimensions out of range")
			}
			if !pngDepthOK(body[9], body[8]) || body[10] != 0 || body[11] != 0 || body[12] > 1 {
				return corrupt("IHDR fields")
			}
			info.Width, info.Height = int(w), int(h)
		case "acTL":
			if n != 8 {
				return corrupt("acTL length")
			}
			if f := binary.BigEndian.Uint32(body[0:4]); f > uint32(info.Frames) {
				info.Frames = int(min(f, math.MaxInt32))
			}
		case "fcTL":
			fcTL++
		case "IEND":
			info.Frames = max(info.Frames, fcTL)
			return info, nil
		}
	}
}

// pngDepthOK reports whether the colour type and bit depth go together.
func pngDepthOK(colorType, depth byte) bool {
	switch colorType {
	case 0:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16
	case 3:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8
	case 2, 4, 6:
		return depth == 8 || depth == 16
	}
	return false
}

func sniffJPEG(data []byte) (Info, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Info{}, &Error{Reason: ReasonType, Detail: "corrupt JPEG", Err: err}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Info{}, refuse(ReasonType, "corrupt JPEG: dimensions out of range")
	}
	return Info{MIMEType: TypeJPEG, Width: cfg.Width, Height: cfg.Height, Frames: 1}, nil
}

// sniffWebP walks the RIFF chunks of a WebP file. The first chunk is one of
//
//   - "VP8 " (lossy): a 3-byte frame tag whose low bit is 0 for a key frame,
//     the start code 9d 01 2a, then 14-bit little-endian width and height
//     (the top two bits of each 16-bit field are a scale);
//   - "VP8L" (lossless): the signature byte 0x2f, then a little-endian
//     32-bit field holding width-1 (14 bits), height-1 (14 bits), an alpha
//     bit and a 3-bit version that must be 0;
//   - "VP8X" (extended): a flags byte (0x02 = animation), 3 reserved bytes,
//     then canvas width-1 and height-1 as 24-bit little-endian integers.
//
// Frames are the ANMF chunks that follow, whether or not the animation flag
// is set.
func sniffWebP(data []byte) (Info, error) {
	corrupt := func(what string) (Info, error) {
		return Info{}, refuse(ReasonType, "corrupt WebP: %s", what)
	}
	size := binary.LittleEndian.Uint32(data[4:8])
	if size < 4 || uint64(size) > uint64(len(data)-8) {
		return corrupt("RIFF size out of range")
	}
	rest := data[12 : 8+size]
	info := Info{MIMEType: TypeWebP, Frames: 1}
	anmf := 0
	animated := false
	for first := true; len(rest) > 0; first = false {
		if len(rest) < 8 {
			return corrupt("truncated chunk header")
		}
		fourCC := string(rest[:4])
		n := binary.LittleEndian.Uint32(rest[4:8])
		if uint64(n) > uint64(len(rest)-8) {
			return corrupt("chunk size out of range")
		}
		body := rest[8 : 8+n]
		rest = rest[8+n:]
		if n%2 == 1 && len(rest) > 0 {
			rest = rest[1:] // padding byte
		}
		if !first {
			if fourCC == "ANMF" {
				anmf++
			}
			continue
		}
		switch fourCC {
		case "VP8 ":
			if n < 10 || body[0]&1 != 0 || body[3] != 0x9d || body[4] != 0x01 || body[5] != 0x2a {
				return corrupt("VP8 frame header")
			}
			info.Width = int(binary.LittleEndian.Uint16(body[6:8]) & 0x3fff)
			info.Height = int(binary.LittleEndian.Uint16(body[8:10]) & 0x3fff)
			if info.Width == 0 || info.Height == 0 {
				return corrupt("VP8 dimensions")
			}
		case "VP8L":
			if n < 5 || body[0] != 0x2f {
				return corrupt("VP8L header")
			}
			b := binary.LittleEndian.Uint32(body[1:5])
			if b>>29 != 0 {
				return corrupt("VP8L version")
			}
			info.Width = int(b&0x3fff) + 1
			info.Height = int(b>>14&0x3fff) + 1
		case "VP8X":
			if n < 10 {
				return corrupt("VP8X header")
			}
			animated = body[0]&0x02 != 0
			info.Width = int(uint32(body[4])|uint32(body[5])<<8|uint32(body[6])<<16) + 1
			info.Height = int(uint32(body[7])|uint32(body[8])<<8|uint32(body[9])<<16) + 1
		default:
			return corrupt("first chunk is " + strconv.Quote(fourCC))
		}
	}
	if info.Width == 0 {
		return corrupt("no chunks")
	}
	if animated && anmf == 0 {
		return corrupt("animation without frames")
	}
	info.Frames = max(1, anmf)
	return info, nil
}

// looksLikeMarkup reports whether data starts, after an optional UTF-8 BOM
// and white space, with '<'.
func looksLikeMarkup(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '<'
}

// sniffSVG reports SVG when the first element of the XML document is an svg
// element in the SVG namespace (or in none).
func sniffSVG(data []byte) (Info, error) {
	d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte(utf8BOM))))
	for {
		tok, err := d.Token()
		if err != nil {
			return Info{}, refuse(ReasonType, "markup that is not SVG")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "svg" || (t.Name.Space != "" && t.Name.Space != svgNS) {
				return Info{}, refuse(ReasonType, "markup that is not SVG")
			}
			info := Info{MIMEType: TypeSVG, Frames: 1}
			info.Width, info.Height = svgSize(t.Attr)
			return info, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return Info{}, refuse(ReasonType, "markup that is not SVG")
			}
		}
	}
}

// svgSize returns the size of an svg root: width and height when both are
// absolute lengths, else the viewBox's, else zeros.
func svgSize(attrs []xml.Attr) (w, h int) {
	var width, height, viewBox string
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "width":
			width = a.Value
		case "height":
			height = a.Value
		case "viewBox":
			viewBox = a.Value
		}
	}
	fw, okw := svgLength(width)
	fh, okh := svgLength(height)
	if okw && okh {
		return pixels(fw), pixels(fh)
	}
	f := strings.FieldsFunc(viewBox, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n'
	})
	if len(f) == 4 {
		vw, errw := strconv.ParseFloat(f[2], 64)
		vh, errh := strconv.ParseFloat(f[3], 64)
		if errw == nil && errh == nil && vw > 0 && vh > 0 {
			return pixels(vw), pixels(vh)
		}
	}
	return 0, 0
}

// svgLength parses an absolute SVG length into CSS pixels.
func svgLength(s string) (float64, bool) {
	units := [...]struct {
		suffix string
		px     float64
	}{
		{"px", 1}, {"pt", 96.0 / 72}, {"pc", 16}, {"in", 96},
		{"cm", 96 / 2.54}, {"mm", 96 / 25.4}, {"q", 96 / 101.6},
	}
	s = strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.px
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, false
	}
	return v * scale, true
}

// pixels rounds a positive length up to whole pixels, saturating.
func pixels(v float64) int {
	if v >= math.MaxInt32 || math.IsNaN(v) {
		return math.MaxInt32
	}
	return int(math.Ceil(v))
}
