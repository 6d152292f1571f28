package host

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Freed memory is not unmapped at once. mmap hands the same addresses to the
// next allocation, so a pointer kept after Free (a second Free, a copy or a
// kernel through a stale pointer) would reach the new owner's memory: a
// double free racing another goroutine's Malloc freed that goroutine's buffer.
// Instead a freed range (the memory of Malloc, HostAlloc or VMMReserve) stays
// reserved in a first-in first-out quarantine: its pages go back to the
// system, its addresses stay mapped without access (PROT_NONE, MAP_NORESERVE:
// no memory behind them), so no new allocation can get them, and the region
// table knows them as freed, so a stale pointer is an error that says so
// rather than a fault or an alias. Only the oldest ranges beyond
// quarantineRanges ranges or quarantineBytes bytes of address space are
// unmapped for real; a pointer kept across that many frees can alias again.
const (
	quarantineRanges = 4096
	quarantineBytes  = 1 << 40 // address space only: 1/128 of a 47-bit user space
)

// quarantine is the freed regions still reserved, oldest first. It is
// guarded by Driver.memMu.
type quarantine struct {
	fifo  []*region
	bytes uint64 // address space the regions in fifo hold
}

// retire frees live region r: its memory returns to the system and to its
// device's budget, and its addresses join the quarantine as a regFreed
// region. A reserved range (VMMReserve) has nothing to release: it is
// PROT_NONE already and holds no mappings (VMMFree refuses while any
// remain). The caller holds memMu for writing.
func (d *Driver) retire(r *region) error {
	var err error
	if r.kind == regDevice || r.kind == regPinned {
		err = inaccessible(r.mapped)
		if r.kind == regDevice {
			d.used[r.dev] -= r.size
		}
	}
	if err != nil {
		// The memory could not be released in place: unmap it after all.
		d.regions.remove(r)
		if uerr := munmap(r.mapped); uerr != nil {
			return osErr("hostFree", r.dev, "munmap", uerr)
		}
		return nil
	}
	r.was, r.kind, r.mem = r.kind, regFreed, nil
	q := &d.freed
	q.fifo = append(q.fifo, r)
	q.bytes += uint64(len(r.mapped))
	for len(q.fifo) > quarantineRanges || q.bytes > quarantineBytes {
		old := q.fifo[0]
		q.fifo[0] = nil
		q.fifo = q.fifo[1:]
		q.bytes -= uint64(len(old.mapped))
		d.regions.remove(old)
		if uerr := munmap(old.mapped); uerr != nil && err == nil {
			err = osErr("hostFree", old.dev, "munmap", uerr)
		}
	}
	return err
}

// inaccessible replaces the pages of b with address space that has neither
// access nor memory behind it, in one step, so the range stays reserved.
func inaccessible(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE)
	return err
}
