// Package report holds the benchmark's result types and renders them as a
// side-by-side Markdown table.
package report
