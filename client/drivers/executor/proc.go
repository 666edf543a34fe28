package executor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is the part of /proc/<pid>/stat the driver uses.
type procStat struct {
	pgrp      int
	utime     uint64
	stime     uint64
	startTime uint64
	rssPages  uint64
}

// readProcStat parses /proc/<pid>/stat. The command name may hold spaces
// and parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	var st procStat
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return st, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	// fields[0] is field 3 (state) of proc(5).
	fields := strings.Fields(s[i+1:])
	if len(fields) < 22 {
		return st, fmt.Errorf("short /proc/%d/stat", pid)
	}
	get := func(field int) uint64 {
		v, _ := strconv.ParseUint(fields[field-3], 10, 64)
		return v
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return st, fmt.Errorf("process %d is a zombie", pid)
	}
	st.pgrp = int(get(5))
	st.utime = get(14)
	st.stime = get(15)
	st.startTime = get(22)
	st.rssPages = get(24)
	return st, nil
}

// processStartTime returns the start time of pid in clock ticks since
// boot, which with the PID identifies a process across PID reuse.
func processStartTime(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	return st.startTime, nil
}

// groupStats sums the stats of every live process in process group pgid.
func groupStats(pgid int) (pids []int, sum procStat) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, sum
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.pgrp != pgid {
			continue
		}
		pids = append(pids, pid)
		sum.utime += st.utime
		sum.stime += st.stime
		sum.rssPages += st.rssPages
	}
	return pids, sum
}
