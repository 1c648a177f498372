package mcp

// CancelledNotificationParams is the params of notifications/cancelled.
type CancelledNotificationParams struct {
	// RequestID is the request to cancel. The schema makes it optional
	// (tasks are cancelled with tasks/cancel instead), but it must be set
	// to cancel an ordinary request. The zero RequestID is left out.
	RequestID RequestID `json:"requestId,omitzero"`
	// Reason says why, for logs or display.
	Reason string `json:"reason,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// ProgressNotificationParams is the params of notifications/progress.
type ProgressNotificationParams struct {
	// ProgressToken is the token from the request's _meta. Required.
	ProgressToken ProgressToken `json:"progressToken"`
	// Progress is the progress so far; it must grow with each
	// notification.
	Progress float64 `json:"progress"`
	// Total is the total amount of work, if known.
	Total *float64 `json:"total,omitempty"`
	// Message describes the current progress.
	Message string `json:"message,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error if ProgressToken is not set.
func (p *ProgressNotificationParams) Validate() error {
	if !p.ProgressToken.IsValid() {
		return invalid("ProgressNotificationParams", "progressToken", "is required")
	}
	return nil
}
