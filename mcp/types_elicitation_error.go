package mcp

import (
	"encoding/json"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// URLElicitationRequiredError is the error of a request that needs the
// user to complete URL-mode elicitations first. A server handler returns
// it (see NewURLElicitationRequiredError) and the session answers with a
// JSON-RPC error of code CodeURLElicitationRequired whose data is Data;
// a client's call returns it when the server answers so. It implements
// error.
type URLElicitationRequiredError struct {
	// Message is the error message.
	Message string
	// Data is the error data, listing the elicitations.
	Data URLElicitationRequiredData
}

// URLElicitationRequiredData is the data member of a
// CodeURLElicitationRequired error.
type URLElicitationRequiredData struct {
	// Elicitations are the URL elicitations to complete; nil encodes as [].
	Elicitations []ElicitRequestURLParams `json:"elicitations"`
}

// MarshalJSON encodes d with Elicitations as [] when nil.
func (d URLElicitationRequiredData) MarshalJSON() ([]byte, error) {
	type wire URLElicitationRequiredData
	w := wire(d)
	if w.Elicitations == nil {
		w.Elicitations = []ElicitRequestURLParams{}
	}
	return json.Marshal(w)
}

// Error implements the error interface.
func (e *URLElicitationRequiredError) Error() string {
	return "mcp: URL elicitation required: " + e.Message
}

// rpcError is the JSON-RPC error a server answers e with.
func (e *URLElicitationRequiredError) rpcError() *jsonrpc.Error {
	return jsonrpc.NewError(CodeURLElicitationRequired, e.Message).WithData(e.Data)
}

// Validate checks each elicitation.
func (e *URLElicitationRequiredError) Validate() error {
	for i := range e.Data.Elicitations {
		if err := e.Data.Elicitations[i].Validate(); err != nil {
			return inField("URLElicitationRequiredError", indexed("error.data.elicitations", i), err)
		}
	}
	return nil
}
