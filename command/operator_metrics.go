package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const operatorMetricsUsage = `
Usage: nomad operator metrics [options]

  Get the agent's metrics: the JSON summary, or with -format prometheus
  the Prometheus text format (the agent needs telemetry
  { prometheus_metrics = true }).

  -pretty            Pretty-print the JSON output.
  -format <format>   The output format: "prometheus".
  -json              Output the metrics summary in JSON format.
  -t                 Format and display the metrics summary using a Go
                     template.
`

func runOperatorMetrics(args []string, s Streams) int {
	var (
		af           apiFlags
		pretty, asJS bool
		format, tmpl string
	)
	fs := newFlagSet("operator metrics", s.Stderr, operatorMetricsUsage)
	af.register(fs)
	fs.BoolVar(&pretty, "pretty", false, "Pretty-print the JSON output")
	fs.StringVar(&format, "format", "", `The output format: "prometheus"`)
	fs.BoolVar(&asJS, "json", false, "Output the metrics summary in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the metrics summary using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	if format != "" && format != "prometheus" {
		fmt.Fprintf(s.Stderr, "Invalid -format %q: the only format is \"prometheus\" (the default is JSON)\n", format)
		return 1
	}
	if format != "" && (asJS || tmpl != "") {
		fmt.Fprintln(s.Stderr, "-format cannot be combined with -json or -t")
		return 1
	}
	params := map[string]string{}
	if pretty {
		params["pretty"] = "1"
	}
	if format != "" {
		params["format"] = format
	}
	q := &api.QueryOptions{Params: params}
	if asJS || tmpl != "" {
		m, _, err := client.Operator().MetricsSummary(q)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying metrics: %v\n", err)
			return 1
		}
		_, code := outputFormat(s.Stdout, s.Stderr, asJS, tmpl, m)
		return code
	}
	b, err := client.Operator().Metrics(q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error getting metrics: %v\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, string(b))
	return 0
}
