module github.com/mcpstack/mcpstack/scripts/vulndb

go 1.25.0
