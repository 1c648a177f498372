package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

func TestFileToolsStayUnderRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "sub", "a.txt"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "bin.dat"), []byte{0xff, 0xfe, 0}, 0o644))
	must(t, os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "link-out")))
	must(t, os.Symlink("sub/a.txt", filepath.Join(root, "link-in")))
	must(t, os.Symlink(base, filepath.Join(root, "dir-out")))

	tests := []struct {
		path    string
		wantErr string // empty: success
		want    string
	}{
		{"sub/a.txt", "", "inside"},
		{"/sub/a.txt", "", "inside"},
		{"sub/../sub/a.txt", "", "inside"},
		{"link-in", "", "inside"},
		{"../secret.txt", "leaves the root", ""},
		{"sub/../../secret.txt", "leaves the root", ""},
		{"link-out", "link-out", ""},
		{"dir-out/secret.txt", "dir-out/secret.txt", ""},
		{`..\secret.txt`, "invalid path", ""},
		{"missing.txt", "missing.txt does not exist", ""},
		{"sub", "not a regular file", ""},
		{"", `a "path" is required`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"path": tt.path})
			res, err := readFileTool(root, &mcp.CallToolRequestParams{Name: "read_file", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			isErr := res.IsError != nil && *res.IsError
			if tt.wantErr != "" {
				if !isErr {
					t.Fatalf("read %q: no error: %+v", tt.path, res.Content[0])
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if !strings.Contains(text, tt.wantErr) || strings.Contains(text, "secret\n") || strings.Contains(text, base) {
					t.Errorf("error %q, want it to mention %q and not reveal anything", text, tt.wantErr)
				}
				return
			}
			if isErr {
				t.Fatalf("read %q: %+v", tt.path, res.Content[0])
			}
			trc := res.Content[0].(*mcp.EmbeddedResource).Resource.(*mcp.TextResourceContents)
			if trc.Text != tt.want || !strings.HasPrefix(trc.URI, "file:///") {
				t.Errorf("read %q: %+v", tt.path, trc)
			}
		})
	}

	res, _ := readFileTool(root, &mcp.CallToolRequestParams{Arguments: json.RawMessage(`{"path":"bin.dat"}`)})
	if blob, ok := res.Content[0].(*mcp.EmbeddedResource).Resource.(*mcp.BlobResourceContents); !ok || len(blob.Blob) != 3 {
		t.Errorf("binary file: %+v", res.Content[0])
	}

	res, _ = listFilesTool(root, &mcp.CallToolRequestParams{Arguments: json.RawMessage(`{}`)})
	if got := res.Content[0].(*mcp.TextContent).Text; got != "bin.dat\ndir-out\nlink-in\nlink-out\nsub/" {
		t.Errorf("list_files: %q", got)
	}
	res, _ = listFilesTool(root, &mcp.CallToolRequestParams{Arguments: json.RawMessage(`{"path":"dir-out"}`)})
	if res.IsError == nil || !*res.IsError {
		t.Errorf("list_files through a symlink out of the root: %+v", res.Content[0])
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDescribeField(t *testing.T) {
	min, max := 2.0, 10.0
	tests := []struct {
		name   string
		def    mcp.PrimitiveSchemaDefinition
		answer string
		want   any
		errSub string
	}{
		{"string", &mcp.StringSchema{MaxLength: ptr(3)}, "abc", "abc", ""},
		{"string too long", &mcp.StringSchema{MaxLength: ptr(3)}, "abcd", nil, "at most 3"},
		{"integer", &mcp.NumberSchema{Type: "integer", Minimum: &min, Maximum: &max}, "7", 7.0, ""},
		{"integer fraction", &mcp.NumberSchema{Type: "integer"}, "7.5", nil, "not a whole number"},
		{"number too small", &mcp.NumberSchema{Minimum: &min}, "1.5", nil, "at least 2"},
		{"not a number", &mcp.NumberSchema{}, "seven", nil, "not a number"},
		{"boolean yes", &mcp.BooleanSchema{}, "Yes", true, ""},
		{"boolean bad", &mcp.BooleanSchema{}, "maybe", nil, "y or n"},
		{"enum by value", &mcp.UntitledSingleSelectEnumSchema{Enum: []string{"a", "b"}}, "B", "b", ""},
		{"enum by number", &mcp.UntitledSingleSelectEnumSchema{Enum: []string{"a", "b"}}, "2", "b", ""},
		{"titled by title", &mcp.TitledSingleSelectEnumSchema{OneOf: []mcp.EnumOption{{Const: "#f00", Title: "Red"}}}, "red", "#f00", ""},
		{"legacy by name", &mcp.LegacyTitledEnumSchema{Enum: []string{"x1"}, EnumNames: []string{"First"}}, "first", "x1", ""},
		{"multi", &mcp.UntitledMultiSelectEnumSchema{Items: mcp.UntitledEnumItems{Enum: []string{"a", "b", "c"}}}, "a, 3", []string{"a", "c"}, ""},
		{"multi too many", &mcp.UntitledMultiSelectEnumSchema{MaxItems: ptr(1), Items: mcp.UntitledEnumItems{Enum: []string{"a", "b"}}}, "a,b", nil, "at most 1"},
		{"titled multi", &mcp.TitledMultiSelectEnumSchema{Items: mcp.TitledEnumItems{AnyOf: []mcp.EnumOption{{Const: "v", Title: "Vee"}}}}, "Vee", []string{"v"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := describeField("f", tt.def, false)
			got, err := f.parse(tt.answer)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Errorf("parse(%q) = %v, %v; want error with %q", tt.answer, got, err, tt.errSub)
				}
				return
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if err != nil || string(gj) != string(wj) {
				t.Errorf("parse(%q) = %s, %v; want %s", tt.answer, gj, err, wj)
			}
		})
	}
}

func TestProgressBar(t *testing.T) {
	total := 8.0
	tests := []struct {
		p    mcp.ProgressNotificationParams
		want string
	}{
		{mcp.ProgressNotificationParams{Progress: 2, Total: &total, Message: "two"}, "[########......................]  25% 2/8 two"},
		{mcp.ProgressNotificationParams{Progress: 9, Total: &total}, "[##############################] 100% 9/8"},
		{mcp.ProgressNotificationParams{Progress: 1.5}, "[??????????????????????????????] 1.5"},
	}
	for _, tt := range tests {
		if got := progressBar(&tt.p); got != tt.want {
			t.Errorf("progressBar(%v) = %q, want %q", tt.p.Progress, got, tt.want)
		}
	}
}
