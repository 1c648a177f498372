package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// specSections are the pages of MCP revision 2025-11-25 and the sections
// of each that comments may cite, as the anchors the published pages give
// their headings (https://modelcontextprotocol.io/specification/2025-11-25/
// followed by page#section). Taken from the specification repository's
// docs/specification/2025-11-25 at b0f60ba, the snapshot that
// ../shared/spec/FACTS.md summarizes.
var specSections = map[string]string{
	"basic":                        "messages requests responses result-responses error-responses notifications auth schema json-schema-usage schema-dialect schema-validation general-fields _meta icons",
	"basic/lifecycle":              "lifecycle-phases initialization version-negotiation capability-negotiation operation shutdown stdio http timeouts error-handling",
	"basic/transports":             "stdio streamable-http security-warning sending-messages-to-the-server listening-for-messages-from-the-server multiple-connections resumability-and-redelivery session-management sequence-diagram protocol-version-header backwards-compatibility custom-transports",
	"basic/utilities/ping":         "overview message-format behavior-requirements usage-patterns implementation-considerations error-handling",
	"basic/utilities/cancellation": "cancellation-flow behavior-requirements timing-considerations implementation-notes error-handling",
	"basic/utilities/progress":     "progress-flow behavior-requirements implementation-notes",
	"basic/utilities/tasks":        "definitions capabilities server-capabilities client-capabilities capability-negotiation tool-level-negotiation protocol-messages creating-tasks getting-tasks retrieving-task-results task-status-notification listing-tasks cancelling-tasks behavior-requirements task-support-and-handling task-id-requirements task-status-lifecycle input-required-status ttl-and-resource-management result-retrieval associating-task-related-messages task-notifications task-progress-notifications task-listing task-cancellation related-task-metadata error-handling protocol-errors task-execution-errors security-considerations task-isolation-and-access-control resource-management",
	"server/tools":                 "capabilities protocol-messages listing-tools calling-tools list-changed-notification data-types tool tool-names tool-result structured-content output-schema error-handling security-considerations",
	"server/resources":             "capabilities protocol-messages listing-resources reading-resources resource-templates list-changed-notification subscriptions data-types resource resource-contents annotations common-uri-schemes error-handling security-considerations",
	"server/prompts":               "capabilities protocol-messages listing-prompts getting-a-prompt list-changed-notification data-types prompt promptmessage error-handling security",
	"server/utilities/completion":  "capabilities protocol-messages requesting-completions reference-types completion-results error-handling",
	"server/utilities/logging":     "capabilities log-levels protocol-messages setting-log-level log-message-notifications error-handling security",
	"server/utilities/pagination":  "pagination-model response-format request-format pagination-flow operations-supporting-pagination implementation-guidelines error-handling",
	"client/roots":                 "capabilities protocol-messages listing-roots root-list-changes data-types root error-handling security-considerations",
	"client/sampling":              "capabilities tools-in-sampling protocol-messages creating-messages sampling-with-tools multi-turn-tool-loop message-content-constraints tool-result-messages tool-use-and-result-balance cross-api-compatibility tool-choice-modes data-types model-preferences model-hints error-handling security-considerations",
	"client/elicitation":           "capabilities protocol-messages elicitation-requests form-mode-elicitation-requests requested-schema url-mode-elicitation-requests completion-notifications-for-url-mode-elicitation url-elicitation-required-error response-actions statefulness safe-url-handling error-handling security-considerations",
}

// specCite matches a citation of the specification in a comment:
// "MCP 2025-11-25 page" or "MCP 2025-11-25 page#section", which may break
// across comment lines.
var specCite = regexp.MustCompile(`MCP(?:\s|//)+2025-11-25(?:\s|//)+((?:basic|server|client)(?:/[a-z_]+)*)(?:#([a-z0-9_-]+))?`)

// sectionRef matches a further "page#section" of a comment, as in "MCP
// 2025-11-25 server/resources#capabilities and server/resources#subscriptions".
var sectionRef = regexp.MustCompile(`(?:^|[\s(])((?:basic|server|client)(?:/[a-z_]+)*)#([a-z0-9_-]+)`)

// minSpecCitations is the least number of citations the MCP engine and
// its HTTP transports hold (issue #18 item 8: a maintainer checking an MCP
// rule finds, next to the code, the section that states it).
const minSpecCitations = 30

// TestSpecCitations: every citation of MCP 2025-11-25 in the module's Go
// files names a page and a section that exist, and mcp and mcp/mcphttp
// cite the specification at least minSpecCitations times.
func TestSpecCitations(t *testing.T) {
	root := "../.."
	engine := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || rel == "internal/archtest/speccite_test.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range specCite.FindAllStringSubmatch(string(src), -1) {
			page, section := m[1], m[2]
			sections, ok := specSections[page]
			switch {
			case !ok:
				t.Errorf("%s cites %q: no such page of MCP 2025-11-25", rel, m[0])
			case section != "" && !strings.Contains(" "+sections+" ", " "+section+" "):
				t.Errorf("%s cites %q: page %s has no section %q", rel, m[0], page, section)
			}
			if dir := filepath.ToSlash(filepath.Dir(rel)); (dir == "mcp" || dir == "mcp/mcphttp") && !strings.HasSuffix(rel, "_test.go") {
				engine++
			}
		}
		// A section named without the revision, in a comment that cites
		// 2025-11-25, must exist too; one of another revision is left alone.
		text := string(src)
		for _, ix := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
			page, section := text[ix[2]:ix[3]], text[ix[4]:ix[5]]
			if strings.Contains(text[max(0, ix[2]-16):ix[2]], "2026-07-28") {
				continue
			}
			if sections, ok := specSections[page]; ok && !strings.Contains(" "+sections+" ", " "+section+" ") {
				t.Errorf("%s cites %s#%s: page %s of MCP 2025-11-25 has no such section", rel, page, section, page)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if engine < minSpecCitations {
		t.Errorf("mcp and mcp/mcphttp cite MCP 2025-11-25 %d times, fewer than %d: cite the section next to the code that implements its rule", engine, minSpecCitations)
	}
}
