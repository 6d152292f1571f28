package host

import (
	"fmt"
	"slices"

	"github.com/ternion/ternion/vendorapi"
)

// capture is a stream's capture in progress; guarded by Driver.mu.
type capture struct {
	st      *stream
	nodes   []*node
	invalid string // why the capture was invalidated; empty while valid
	ended   bool
}

// active reports whether c is a capture still in progress.
func (c *capture) active() bool { return c != nil && !c.ended }

// invalidate marks c invalid, keeping the first reason.
func (c *capture) invalidate(reason string) {
	if c.invalid == "" {
		c.invalid = reason
	}
}

func (c *capture) end() { c.ended = true }

// usable returns an error when c was invalidated: nothing more may be added.
func (c *capture) usable(call string) error {
	if c.invalid != "" {
		return newErr(errCaptureInvalidated, call, c.st.dev, "the capture of stream %d was invalidated: %s", c.st.id, c.invalid)
	}
	return nil
}

// add appends nodes, admitted (Driver.admit), to the capture. The caller
// holds d.mu. Recording an event marks it captured and adds no node, as in
// CUDA, where a captured record only orders the capture's own work and the
// graph records nothing when it runs; so a wait on such an event adds none
// either.
func (c *capture) add(d *Driver, nodes []*node) {
	for _, n := range nodes {
		switch {
		case n.kind == nodeRecord:
			d.events[n.event.Handle].captured = c
		case n.kind == nodeWait && d.events[n.event.Handle].captured == c:
		default:
			c.nodes = append(c.nodes, n)
		}
	}
}

// graph is a captured graph or an executable one: nodes in stream order.
type graph struct {
	dev   int
	nodes []*node
}

// BeginCapture starts capturing s (relaxed mode): work queued on s from now on
// is recorded, not run, until EndCapture.
func (d *Driver) BeginCapture(s vendorapi.Stream) error {
	const call = "hostStreamBeginCapture"
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.lookupStream(call, s)
	if err != nil {
		return err
	}
	if st.capture != nil {
		return newErr(errIllegalState, call, s.Device, "stream %d is already capturing", st.id)
	}
	st.capture = &capture{st: st}
	return nil
}

// EndCapture ends the capture on s and returns the graph; it fails when the
// capture was invalidated, and the capture ends either way.
func (d *Driver) EndCapture(s vendorapi.Stream) (vendorapi.Graph, error) {
	const call = "hostStreamEndCapture"
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.lookupStream(call, s)
	if err != nil {
		return vendorapi.Graph{}, err
	}
	c := st.capture
	if c == nil {
		return vendorapi.Graph{}, newErr(errIllegalState, call, s.Device, "stream %d is not capturing", st.id)
	}
	st.capture = nil
	c.end()
	if c.invalid != "" {
		return vendorapi.Graph{}, newErr(errCaptureInvalidated, call, s.Device,
			"the capture of stream %d was invalidated: %s", st.id, c.invalid)
	}
	id := d.id()
	d.graphs[id] = &graph{dev: st.dev, nodes: c.nodes}
	return vendorapi.Graph{Device: st.dev, Handle: id}, nil
}

// CaptureStatus reports whether s is capturing, and whether that capture was invalidated.
func (d *Driver) CaptureStatus(s vendorapi.Stream) (vendorapi.CaptureStatus, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st, err := d.lookupStream("hostStreamGetCaptureInfo", s)
	switch {
	case err != nil:
		return vendorapi.CaptureNone, err
	case st.capture == nil:
		return vendorapi.CaptureNone, nil
	case st.capture.invalid != "":
		return vendorapi.CaptureInvalid, nil
	}
	return vendorapi.CaptureActive, nil
}

func (d *Driver) lookupGraph(call string, g vendorapi.Graph) (*graph, error) {
	gr := d.graphs[g.Handle]
	if gr == nil || gr.dev != g.Device {
		return nil, newErr(errInvalidHandle, call, g.Device, "unknown or destroyed graph %d", g.Handle)
	}
	return gr, nil
}

func (d *Driver) lookupExec(call string, e vendorapi.GraphExec) (*graph, error) {
	ex := d.execs[e.Handle]
	if ex == nil || ex.dev != e.Device {
		return nil, newErr(errInvalidHandle, call, e.Device, "unknown or destroyed executable graph %d", e.Handle)
	}
	return ex, nil
}

// GraphInstantiate makes an executable copy of g.
func (d *Driver) GraphInstantiate(g vendorapi.Graph) (vendorapi.GraphExec, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	gr, err := d.lookupGraph("hostGraphInstantiate", g)
	if err != nil {
		return vendorapi.GraphExec{}, err
	}
	id := d.id()
	d.execs[id] = &graph{dev: gr.dev, nodes: slices.Clone(gr.nodes)}
	return vendorapi.GraphExec{Device: gr.dev, Handle: id}, nil
}

// GraphExecUpdate gives e the parameters of g's nodes when both have the same
// nodes in the same order (kinds, devices, kernel names); otherwise it
// returns an error matching ErrGraphUpdate and e is unchanged.
func (d *Driver) GraphExecUpdate(e vendorapi.GraphExec, g vendorapi.Graph) error {
	const call = "hostGraphExecUpdate"
	d.mu.Lock()
	defer d.mu.Unlock()
	ex, err := d.lookupExec(call, e)
	if err != nil {
		return err
	}
	gr, err := d.lookupGraph(call, g)
	if err != nil {
		return err
	}
	if ex.dev != gr.dev {
		return invalid(call, e.Device, "graph of device %d, executable graph of device %d", gr.dev, ex.dev)
	}
	if len(ex.nodes) != len(gr.nodes) {
		return newErr(errGraphExecUpdate, call, e.Device, "topology changed: %d nodes, executable graph has %d", len(gr.nodes), len(ex.nodes))
	}
	for i, n := range ex.nodes {
		if !n.updatable(gr.nodes[i]) {
			return newErr(errGraphExecUpdate, call, e.Device, "node %d changed from %s to %s", i, n.describe(), gr.nodes[i].describe())
		}
	}
	ex.nodes = slices.Clone(gr.nodes)
	return nil
}

// GraphLaunch queues e's nodes, in capture order, on s (a stream of e's device).
func (d *Driver) GraphLaunch(e vendorapi.GraphExec, s vendorapi.Stream) error {
	const call = "hostGraphLaunch"
	d.mu.Lock()
	ex, err := d.lookupExec(call, e)
	var nodes []*node
	if err == nil {
		nodes = ex.nodes
		if s.Device != ex.dev {
			err = invalid(call, s.Device, "executable graph of device %d launched on a stream of device %d", ex.dev, s.Device)
		}
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	return d.submit(call, s, nodes...)
}

// GraphDestroy destroys a captured graph.
func (d *Driver) GraphDestroy(g vendorapi.Graph) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.lookupGraph("hostGraphDestroy", g); err != nil {
		return err
	}
	delete(d.graphs, g.Handle)
	return nil
}

// GraphExecDestroy destroys an executable graph; launches already queued still run.
func (d *Driver) GraphExecDestroy(e vendorapi.GraphExec) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.lookupExec("hostGraphExecDestroy", e); err != nil {
		return err
	}
	delete(d.execs, e.Handle)
	return nil
}

// describe names a node and its device for GraphExecUpdate errors.
func (n *node) describe() string {
	switch n.kind {
	case nodeKernel:
		return fmt.Sprintf("kernel %s on device %d", n.fn.Name, n.fn.Device)
	case nodePeer:
		return fmt.Sprintf("peer copy from device %d to device %d", n.srcDev, n.dev)
	}
	return fmt.Sprintf("%s on device %d", n.kindName(), n.dev)
}

// kindName names a node's kind.
func (n *node) kindName() string {
	switch n.kind {
	case nodeKernel:
		return "kernel"
	case nodeMemset:
		return "memset"
	case nodeHtoD:
		return "copy host to device"
	case nodeDtoH:
		return "copy device to host"
	case nodeDtoD:
		return "copy device to device"
	case nodePeer:
		return "peer copy"
	case node2D:
		return "2D copy"
	case nodeGemm:
		return "gemm"
	case nodeGemmStrided:
		return "strided batched gemm"
	case nodeGemmBatched:
		return "batched gemm"
	case nodeRecord:
		return "event record"
	case nodeWait:
		return "event wait"
	case nodeFault:
		return "injected fault"
	}
	return "node"
}
