module github.com/mcpstack/mcpstack

go 1.25.0
