// The run's DAG, drawn by React Flow from the layout of graph.ts: a node per task coloured by
// its status, with its icon, status in words, duration and what it waits on; edges labelled
// with their conditions. Clicking a node (or Enter on it) selects its task.
import { Box, Text, UnstyledButton, useComputedColorScheme } from "@mantine/core";
import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  useNodesInitialized,
  useNodesState,
  useReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { memo, useEffect, useMemo, useRef, type RefObject } from "react";
import { NODE_HEIGHT, NODE_WIDTH, type GraphEdge, type GraphNode } from "./graph";
import { elapsed, formatDuration, gate } from "./status";
import { lookOf, StatusIcon } from "./StatusIcon";

// A click on a node (or Enter on its button, whose click bubbles to the node) reaches
// ReactFlow's onNodeClick, which selects the task.
type TaskNodeData = { node: GraphNode; selected: boolean; now: number };
type TaskNode = Node<TaskNodeData, "task">;

const TaskNodeView = memo(function TaskNodeView({ data }: NodeProps<TaskNode>) {
  const { node, selected, now } = data;
  const status = node.task?.status ?? "notstarted";
  const { color } = lookOf(status);
  const waits = node.task ? gate(node.task) : undefined;
  const took = node.task ? formatDuration(elapsed(node.task, now)) : "";
  const detail = [status, took, waits].filter(Boolean).join(" · ");
  return (
    <>
      <Handle type="target" position={Position.Left} isConnectable={false} style={{ visibility: "hidden" }} />
      <UnstyledButton
        aria-pressed={selected}
        aria-label={`Task ${node.name}: ${detail}`}
        data-status={status}
        data-task={node.name}
        className="nodrag"
        style={{
          width: NODE_WIDTH,
          height: NODE_HEIGHT,
          padding: "6px 10px",
          borderRadius: 8,
          border: `${selected ? 3 : 2}px solid var(--mantine-color-${color}-filled)`,
          background: `var(--mantine-color-${color}-light)`,
          boxShadow: selected ? "0 0 0 3px var(--mantine-primary-color-light)" : undefined,
          color: "var(--mantine-color-text)",
          display: "flex",
          flexDirection: "column",
          justifyContent: "center",
          gap: 2,
          overflow: "hidden",
        }}
      >
        <Box style={{ display: "flex", alignItems: "center", gap: 6, minWidth: 0 }}>
          <StatusIcon status={status} />
          <Text fw={600} size="sm" truncate="end">
            {node.name}
          </Text>
        </Box>
        <Text size="xs" truncate="end">
          {detail}
        </Text>
        <Text size="xs" c="dimmed" truncate="end">
          {node.type}
        </Text>
      </UnstyledButton>
      <Handle type="source" position={Position.Right} isConnectable={false} style={{ visibility: "hidden" }} />
    </>
  );
});

const nodeTypes = { task: TaskNodeView };

/**
 * FitView fits the graph in view once its nodes are measured, again when the set of tasks
 * changes, and when its box is resized (a panel opening beside it, the window).
 */
function FitView({ names, box }: { names: string; box: RefObject<HTMLDivElement | null> }) {
  const flow = useReactFlow();
  const ready = useNodesInitialized();
  useEffect(() => {
    if (!ready) return;
    let frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.15, maxZoom: 1.1 }));
    const el = box.current;
    if (!el) return () => cancelAnimationFrame(frame);
    const ro = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.15, maxZoom: 1.1 }));
    });
    ro.observe(el);
    return () => {
      cancelAnimationFrame(frame);
      ro.disconnect();
    };
  }, [flow, ready, names, box]);
  return null;
}

export interface RunGraphProps {
  nodes: GraphNode[];
  edges: GraphEdge[];
  selected: string | undefined;
  onSelect: (name: string) => void;
  now: number;
}

const edgeColor: Record<string, string> = {
  success: "var(--mantine-color-green-filled)",
  failure: "var(--mantine-color-red-filled)",
};

export default function RunGraph({ nodes, edges, selected, onSelect, now }: RunGraphProps) {
  const scheme = useComputedColorScheme("light");
  const box = useRef<HTMLDivElement>(null);
  // React Flow keeps each node's measured size on the node: new node objects (each change
  // of the run, each second's durations) take the size measured before, or the edges and
  // the fit would wait for a new measurement every time.
  const [flowNodes, setFlowNodes, onNodesChange] = useNodesState<TaskNode>([]);
  useEffect(() => {
    setFlowNodes((prev) => {
      const measured = new Map(prev.map((n) => [n.id, n.measured]));
      return nodes.map((n) => ({
        id: n.name,
        type: "task" as const,
        position: { x: n.x, y: n.y },
        data: { node: n, selected: n.name === selected, now },
        draggable: false,
        connectable: false,
        selectable: false,
        focusable: false,
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        measured: measured.get(n.name),
      }));
    });
  }, [nodes, selected, now, setFlowNodes]);
  const flowEdges = useMemo<Edge[]>(
    () =>
      edges.map((e) => {
        const stroke = edgeColor[e.condition] ?? "var(--mantine-color-dimmed)";
        return {
          id: e.id,
          source: e.source,
          target: e.target,
          label: e.label,
          focusable: false,
          selectable: false,
          style: { stroke, strokeWidth: 1.5, strokeDasharray: e.condition === "failure" ? "5 4" : undefined },
          markerEnd: { type: MarkerType.ArrowClosed, color: stroke },
          labelStyle: { fill: "var(--mantine-color-text)", fontSize: 12 },
          labelBgStyle: { fill: "var(--mantine-color-body)" },
          labelBgPadding: [4, 2] as [number, number],
        };
      }),
    [edges],
  );
  return (
    <Box ref={box} style={{ height: "max(420px, calc(100vh - 330px))", border: "1px solid var(--mantine-color-default-border)", borderRadius: 8 }}>
      <ReactFlow
        nodes={flowNodes}
        edges={flowEdges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onNodeClick={(_, n) => onSelect(n.id)}
        colorMode={scheme}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        aria-label="The run's tasks and their dependencies"
      >
        <FitView names={nodes.map((n) => n.name).join("\n")} box={box} />
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </Box>
  );
}
