// The designer's canvas: the workflow's tasks as nodes, their dependencies as edges
// (@xyflow/react). Dragging moves nodes on the canvas only; the document gets the new
// positions when the drag ends, so a drag never re-renders the other views.
import "@xyflow/react/dist/style.css";
import { useComputedColorScheme } from "@mantine/core";
import { IconAlertTriangle } from "@tabler/icons-react";
import {
  Background,
  BaseEdge,
  Controls,
  EdgeLabelRenderer,
  Handle,
  MiniMap,
  Position as Side,
  ReactFlow,
  applyNodeChanges,
  getBezierPath,
  useReactFlow,
  type Connection,
  type EdgeProps,
  type NodeChange,
  type NodeProps,
} from "@xyflow/react";
import { memo, startTransition, useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from "react";
import classes from "./designer.module.css";
import { edgesFor, nodesFor, type CondEdge, type TaskNode } from "./canvas";
import { positions } from "./layout";
import { positionOf, tasksOf, type Position, type Problems, type Workflow } from "./model";

export const CATALOGUE_MIME = "application/x-baton-task";

const TaskNodeView = memo(function TaskNodeView({ data, selected }: NodeProps<TaskNode>) {
  const t = data;
  const bad = (data.problems?.length ?? 0) > 0;
  const structural = t.type === "start" || t.type === "end";
  return (
    <div
      className={classes.node}
      data-selected={selected || undefined}
      data-problem={bad || undefined}
      data-structural={structural || undefined}
      data-testid={`task-${t.name}`}
      title={bad ? data.problems?.join("\n") : undefined}
    >
      {t.type !== "start" && <Handle type="target" position={Side.Top} />}
      <div className={classes.nodeName}>
        {bad && <IconAlertTriangle size={14} aria-label="Has problems" className={classes.nodeIcon} />}
        {t.name}
      </div>
      {!structural && <div className={classes.nodeType}>{t.taskRef ? `${t.type} · ${t.taskRef}` : t.type}</div>}
      {bad && (
        <div className={classes.nodeProblem} role="note">
          {data.problems?.[0]}
          {(data.problems?.length ?? 0) > 1 ? ` (+${(data.problems?.length ?? 0) - 1})` : ""}
        </div>
      )}
      {t.type !== "end" && <Handle type="source" position={Side.Bottom} />}
    </div>
  );
});

function ConditionEdgeView(p: EdgeProps<CondEdge>) {
  const [path, lx, ly] = getBezierPath(p);
  const bad = (p.data?.problems?.length ?? 0) > 0;
  return (
    <>
      <BaseEdge id={p.id} path={path} markerEnd={p.markerEnd} className={bad ? classes.edgeProblem : undefined} />
      {(p.data?.label || p.selected || bad) && (
        <EdgeLabelRenderer>
          <button
            type="button"
            className={`${classes.edgeLabel} nodrag nopan`}
            data-selected={p.selected || undefined}
            data-problem={bad || undefined}
            style={{ transform: `translate(-50%, -50%) translate(${lx}px, ${ly}px)` }}
            aria-label={`Condition of ${p.source} to ${p.target}: ${p.data?.label || "always"}`}
            title={bad ? p.data?.problems?.join("\n") : "Edit the condition"}
            onClick={() => p.data?.onOpen(p.id)}
          >
            {p.data?.label || "always"}
          </button>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

const nodeTypes = { task: TaskNodeView };
const DELETE_KEYS = ["Delete", "Backspace"];
const PRO_OPTIONS = { hideAttribution: true };
// A margin around the fitted graph keeps its corners clear of the controls and the overview.
const FIT_VIEW = { padding: 0.3, maxZoom: 1.25 };
const MINIMAP_STYLE = { width: 140, height: 100 };
const edgeTypes = { condition: ConditionEdgeView };

export interface GraphProps {
  workflow: Workflow;
  problems: Problems;
  selectedTask?: string;
  selectedEdge?: string;
  onSelectTask: (name: string | undefined) => void;
  onSelectEdge: (id: string | undefined) => void;
  onMove: (moves: Map<string, Position>) => void;
  onConnect: (source: string, target: string) => void;
  onDeleteTasks: (names: string[]) => void;
  onDeleteEdges: (edges: { source: string; target: string }[]) => void;
  /** A catalogue task dropped at a point of the canvas. */
  onDropTask: (ref: string, at: Position) => void;
  /** Registers a function answering the centre of the visible canvas, for tasks added by click. */
  onViewportCentre: (f: () => Position) => void;
}

/**
 * Graph draws the workflow. Nodes and edges are rebuilt from the document when it changes,
 * reusing the objects of those that draw the same (canvas.ts), so the canvas re-renders only
 * what changed.
 */
export function Graph(props: GraphProps) {
  const { workflow, problems, selectedTask, selectedEdge } = props;
  const colorScheme = useComputedColorScheme("light");
  const flow = useReactFlow();
  const layoutCache = useRef<{ shape?: string; laid?: Map<string, Position> }>({});
  const [nodes, setNodes] = useState<TaskNode[]>([]);

  useEffect(() => {
    const at = positions(workflow, layoutCache.current);
    setNodes((current) => nodesFor(workflow, at, problems, selectedTask, current));
  }, [workflow, problems, selectedTask]);

  const { onSelectEdge } = props;
  const edgesRef = useRef<CondEdge[]>([]);
  const edges = useMemo(
    () => (edgesRef.current = edgesFor(workflow, problems, selectedEdge, onSelectEdge, edgesRef.current)),
    [workflow, problems, selectedEdge, onSelectEdge],
  );

  const onNodesChange = useCallback((changes: NodeChange<TaskNode>[]) => {
    // Selection and removal go through the document (and the URL); the canvas applies moves
    // and measurements itself.
    const own = changes.filter((c) => c.type === "position" || c.type === "dimensions");
    if (own.length > 0) setNodes((ns) => applyNodeChanges(own, ns));
  }, []);

  const { onMove, onConnect, onDeleteTasks, onDeleteEdges, onSelectTask, onDropTask, onViewportCentre } = props;

  useEffect(() => {
    onViewportCentre(() => {
      const el = document.querySelector(".react-flow");
      const r = el?.getBoundingClientRect();
      if (!r) return { x: 0, y: 0 };
      return flow.screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 2 });
    });
  }, [flow, onViewportCentre]);

  const onDragOver = useCallback((e: DragEvent) => {
    if (e.dataTransfer.types.includes(CATALOGUE_MIME)) {
      e.preventDefault();
      e.dataTransfer.dropEffect = "copy";
    }
  }, []);
  const onDrop = useCallback(
    (e: DragEvent) => {
      const ref = e.dataTransfer.getData(CATALOGUE_MIME);
      if (!ref) return;
      e.preventDefault();
      onDropTask(ref, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    },
    [flow, onDropTask],
  );

  // Every handler is stable: a prop that changes makes the canvas update its store, and
  // during a drag the canvas renders every frame.
  const nodesRef = useRef(nodes);
  nodesRef.current = nodes;
  const workflowRef = useRef(workflow);
  workflowRef.current = workflow;
  const onNodeDragStop = useCallback(
    (_: unknown, __: unknown, dragged: TaskNode[]) => {
      // The first move by hand keeps the whole layout: nodes placed by the automatic
      // layout get their positions stored too, so later edits do not rearrange them.
      const placed = new Set(tasksOf(workflowRef.current).filter((t) => positionOf(t)).map((t) => t.name));
      const moves = new Map<string, Position>();
      for (const n of nodesRef.current) if (!placed.has(n.id)) moves.set(n.id, n.position);
      for (const n of dragged) moves.set(n.id, n.position);
      // The canvas shows the move already: the document (the page around the canvas, its
      // forms and badges) follows in a transition, rendered in slices between frames, so
      // the release of a node among hundreds is no long task.
      startTransition(() => onMove(moves));
    },
    [onMove],
  );
  const handleConnect = useCallback((c: Connection) => onConnect(c.source, c.target), [onConnect]);
  const isValidConnection = useCallback((c: Connection | CondEdge) => c.source !== c.target, []);
  const onNodeClick = useCallback((_: unknown, n: TaskNode) => onSelectTask(n.id), [onSelectTask]);
  const onEdgeClick = useCallback((_: unknown, e: CondEdge) => onSelectEdge(e.id), [onSelectEdge]);
  const onPaneClick = useCallback(() => {
    onSelectTask(undefined);
    onSelectEdge(undefined);
  }, [onSelectTask, onSelectEdge]);
  const onNodesDelete = useCallback((ns: TaskNode[]) => onDeleteTasks(ns.map((n) => n.id)), [onDeleteTasks]);
  const onEdgesDelete = useCallback(
    (es: CondEdge[]) => onDeleteEdges(es.map((e) => ({ source: e.source, target: e.target }))),
    [onDeleteEdges],
  );

  return (
    <ReactFlow<TaskNode, CondEdge>
      nodes={nodes}
      edges={edges}
      nodeTypes={nodeTypes}
      edgeTypes={edgeTypes}
      colorMode={colorScheme}
      onNodesChange={onNodesChange}
      onNodeDragStop={onNodeDragStop}
      onConnect={handleConnect}
      isValidConnection={isValidConnection}
      onNodeClick={onNodeClick}
      onEdgeClick={onEdgeClick}
      onPaneClick={onPaneClick}
      onNodesDelete={onNodesDelete}
      onEdgesDelete={onEdgesDelete}
      onDragOver={onDragOver}
      onDrop={onDrop}
      deleteKeyCode={DELETE_KEYS}
      fitView
      fitViewOptions={FIT_VIEW}
      minZoom={0.1}
      onlyRenderVisibleElements
      proOptions={PRO_OPTIONS}
      aria-label="Workflow graph"
    >
      <Background />
      <Controls aria-label="Canvas controls" fitViewOptions={FIT_VIEW} />
      <MiniMap pannable zoomable ariaLabel="Overview of the workflow" style={MINIMAP_STYLE} />
    </ReactFlow>
  );
}
