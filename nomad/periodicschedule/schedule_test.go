package periodicschedule

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestNext(t *testing.T) {
	cases := []struct {
		name  string
		cfg   structs.PeriodicConfig
		after string
		want  string // RFC3339 in UTC; "" for an error
	}{
		{"seconds field", structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}}, "2026-06-01T10:00:00Z", "2026-06-01T10:00:02Z"},
		{"strictly after", structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}}, "2026-06-01T10:00:01Z", "2026-06-01T10:00:02Z"},
		{"hourly", structs.PeriodicConfig{Specs: []string{"0 * * * *"}}, "2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z"},
		{"legacy single cron", structs.PeriodicConfig{Spec: "30 4 * * *"}, "2026-06-01T10:00:00Z", "2026-06-02T04:30:00Z"},
		{"earliest of crons", structs.PeriodicConfig{Specs: []string{"0 3 * * *", "0 15 * * *"}}, "2026-06-01T10:00:00Z", "2026-06-01T15:00:00Z"},
		{"time zone", structs.PeriodicConfig{Specs: []string{"0 9 * * *"}, TimeZone: "America/New_York"}, "2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z"},
		{"time zone, winter offset", structs.PeriodicConfig{Specs: []string{"0 9 * * *"}, TimeZone: "America/New_York"}, "2026-01-15T15:00:00Z", "2026-01-16T14:00:00Z"},
		{"asia, no DST", structs.PeriodicConfig{Specs: []string{"0 0 * * *"}, TimeZone: "Asia/Tokyo"}, "2026-06-01T10:00:00Z", "2026-06-01T15:00:00Z"},
		// 2026-03-08 02:30 does not exist in New York: that day is skipped.
		{"spring forward, missing wall time", structs.PeriodicConfig{Specs: []string{"30 2 * * *"}, TimeZone: "America/New_York"}, "2026-03-08T05:00:00Z", "2026-03-09T06:30:00Z"},
		{"spring forward, hourly skips the missing hour", structs.PeriodicConfig{Specs: []string{"0 * * * *"}, TimeZone: "America/New_York"}, "2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z"},
		{"spring forward, berlin", structs.PeriodicConfig{Specs: []string{"0 2 * * *"}, TimeZone: "Europe/Berlin"}, "2026-03-28T23:00:00Z", "2026-03-30T00:00:00Z"},
		// 2026-11-01 01:30 happens twice in New York (EDT, then EST).
		{"fall back, first occurrence", structs.PeriodicConfig{Specs: []string{"30 1 * * *"}, TimeZone: "America/New_York"}, "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"fall back, repeated time launches once", structs.PeriodicConfig{Specs: []string{"30 1 * * *"}, TimeZone: "America/New_York"}, "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		{"fall back, hourly runs each wall hour once", structs.PeriodicConfig{Specs: []string{"0 * * * *"}, TimeZone: "America/New_York"}, "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
		{"fall back, half-hourly keeps firing", structs.PeriodicConfig{Specs: []string{"*/30 * * * *"}, TimeZone: "America/New_York"}, "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z"},
		{"fall back, every 2s keeps firing", structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}, TimeZone: "America/New_York"}, "2026-11-01T05:59:59Z", "2026-11-01T06:00:00Z"},
		{"unknown time zone", structs.PeriodicConfig{Specs: []string{"0 * * * *"}, TimeZone: "Mars/Olympus"}, "2026-06-01T10:00:00Z", ""},
		{"bad cron", structs.PeriodicConfig{Specs: []string{"not a cron"}}, "2026-06-01T10:00:00Z", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Next(&tc.cfg, utc(tc.after))
			if tc.want == "" {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, utc(tc.want), got.UTC())
		})
	}
}

func TestDecide(t *testing.T) {
	every2s := &structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}}
	hourly := &structs.PeriodicConfig{Specs: []string{"0 * * * *"}}
	cases := []struct {
		name        string
		cfg         *structs.PeriodicConfig
		anchor, now string
		want        Step
	}{
		{"not due", every2s, "2026-06-01T10:00:00Z", "2026-06-01T10:00:01Z", Step{Wake: utc("2026-06-01T10:00:02Z")}},
		{"due on time", every2s, "2026-06-01T10:00:00Z", "2026-06-01T10:00:02Z", Step{Launch: true, At: utc("2026-06-01T10:00:02Z")}},
		{"a little late keeps the scheduled time", every2s, "2026-06-01T10:00:00Z", "2026-06-01T10:00:03Z", Step{Launch: true, At: utc("2026-06-01T10:00:02Z")}},
		{"one missed launch runs at its time", hourly, "2026-06-01T10:00:00Z", "2026-06-01T11:20:00Z", Step{Launch: true, At: utc("2026-06-01T11:00:00Z")}},
		{"many missed launches collapse into one now", hourly, "2026-06-01T10:00:00Z", "2026-06-01T15:20:00Z", Step{Launch: true, At: utc("2026-06-01T15:20:00Z")}},
		{"no more launches", &structs.PeriodicConfig{Specs: []string{"0 0 1 1 * 2020"}}, "2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z", Step{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.cfg, utc(tc.anchor), utc(tc.now))
			must.NoError(t, err)
			must.Eq(t, tc.want.Launch, got.Launch)
			must.Eq(t, tc.want.At.UTC(), got.At.UTC())
			must.Eq(t, tc.want.Wake.UTC(), got.Wake.UTC())
			if got.Launch {
				// After the launch nothing is due until a later tick: no burst.
				again, err := Decide(tc.cfg, got.At, utc(tc.now))
				must.NoError(t, err)
				must.False(t, again.Launch)
			}
		})
	}
}
