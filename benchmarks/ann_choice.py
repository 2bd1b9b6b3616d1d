"""Which ANN library: faiss (HNSW, IVF), hnswlib or usearch, measured on one synthetic 200K set.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/ann_choice.py 200000

The vectors: 3,000 real MiniLM vectors of benchmark record texts as centres, 200K noisy copies
(benchmarks/synthetic_vectors.py); 200 real query vectors. For each library: build time (one
thread where the library allows it), query time for a top-10, recall@10 against exact search,
and the same under a random 60% allowed mask where the library can filter. Needs faiss-cpu,
hnswlib and usearch installed (only faiss-cpu is a project dependency: this script is how it
was chosen). Writes benchmarks/results/ann_choice.json.
"""
import json, os, sys, time

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ["OMP_NUM_THREADS"]="1"
N=int(sys.argv[1]); NQ=200; K=10
from benchmarks import search_corpus
from benchmarks.synthetic_vectors import noisy_copies
from memory_core.embed.sentence import SentenceTransformerEmbedder
emb = SentenceTransformerEmbedder()
items = search_corpus.texts(3000)
centres = emb.embed([c for _, c in items])
qv = emb.embed(search_corpus.queries(NQ))
X = noisy_copies(centres, N)
rng=np.random.default_rng(3); allowed = rng.random(N) < 0.6; BM=np.packbits(allowed, bitorder="little")
def exact(mask):
    out=[]
    S = X @ qv.T
    if mask is not None: S[~mask] = -9
    for j in range(NQ):
        s=S[:,j]; t=np.argpartition(-s,K)[:K]; out.append(set(t.tolist()))
    return out
ex_all, ex_mask = exact(None), exact(allowed)
t=time.perf_counter(); S = X @ qv[0]; np.argpartition(-S,K)[:K]; print("exact one query ms", (time.perf_counter()-t)*1000, flush=True)
res={}
def rec(got, ex): return np.mean([len(set(g)&e)/K for g,e in zip(got,ex)])
import faiss
faiss.omp_set_num_threads(1)
# faiss HNSW
for name, build in [
  ("faiss_hnsw32", lambda: faiss.IndexHNSWFlat(384, 32, faiss.METRIC_INNER_PRODUCT)),
]:
    idx=build(); idx.hnsw.efConstruction=80
    t=time.perf_counter(); idx.add(X); bt=time.perf_counter()-t; print(name,"build s",bt,flush=True)
    for ef in (64,128):
        p=faiss.SearchParametersHNSW(); p.efSearch=ef
        sel=faiss.IDSelectorBitmap(allowed.size, faiss.swig_ptr(BM))
        pm=faiss.SearchParametersHNSW(sel=sel); pm.efSearch=ef
        t=time.perf_counter(); got=[idx.search(qv[j:j+1],K,params=p)[1][0] for j in range(NQ)]; qt=(time.perf_counter()-t)/NQ
        t=time.perf_counter(); gotm=[idx.search(qv[j:j+1],K,params=pm)[1][0] for j in range(NQ)]; qtm=(time.perf_counter()-t)/NQ
        res[f"{name}_ef{ef}"]=dict(build_s=bt, q_ms=qt*1000, recall=rec(got,ex_all), q_ms_mask=qtm*1000, recall_mask=rec(gotm,ex_mask))
        print(res, flush=True)
# faiss IVF
nlist=int(4*np.sqrt(N))
q=faiss.IndexFlatIP(384); idx=faiss.IndexIVFFlat(q,384,nlist,faiss.METRIC_INNER_PRODUCT)
t=time.perf_counter(); idx.train(X[rng.choice(N, min(N, 40*nlist), replace=False)]); idx.add(X); bt=time.perf_counter()-t
for npb in (16,32,64):
    p=faiss.SearchParametersIVF(); p.nprobe=npb
    sel=faiss.IDSelectorBitmap(allowed.size, faiss.swig_ptr(BM)); pm=faiss.SearchParametersIVF(sel=sel); pm.nprobe=npb
    t=time.perf_counter(); got=[idx.search(qv[j:j+1],K,params=p)[1][0] for j in range(NQ)]; qt=(time.perf_counter()-t)/NQ
    t=time.perf_counter(); gotm=[idx.search(qv[j:j+1],K,params=pm)[1][0] for j in range(NQ)]; qtm=(time.perf_counter()-t)/NQ
    res[f"faiss_ivf{nlist}_np{npb}"]=dict(build_s=bt, q_ms=qt*1000, recall=rec(got,ex_all), q_ms_mask=qtm*1000, recall_mask=rec(gotm,ex_mask))
    print(res[f"faiss_ivf{nlist}_np{npb}"], flush=True)
# hnswlib
import hnswlib
idx=hnswlib.Index(space="ip", dim=384); idx.init_index(max_elements=N, ef_construction=80, M=16); idx.set_num_threads(1)
t=time.perf_counter(); idx.add_items(X, np.arange(N)); bt=time.perf_counter()-t
for ef in (64,128):
    idx.set_ef(ef)
    t=time.perf_counter(); got=[idx.knn_query(qv[j:j+1],k=K)[0][0] for j in range(NQ)]; qt=(time.perf_counter()-t)/NQ
    f=lambda i: bool(allowed[i])
    t=time.perf_counter(); gotm=[idx.knn_query(qv[j:j+1],k=K,filter=f)[0][0] for j in range(NQ)]; qtm=(time.perf_counter()-t)/NQ
    res[f"hnswlib16_ef{ef}"]=dict(build_s=bt, q_ms=qt*1000, recall=rec(got,ex_all), q_ms_mask=qtm*1000, recall_mask=rec(gotm,ex_mask))
    print(res[f"hnswlib16_ef{ef}"], flush=True)
# usearch
from usearch.index import Index
idx=Index(ndim=384, metric="ip", dtype="f32", connectivity=16, expansion_add=80)
t=time.perf_counter(); idx.add(np.arange(N), X, threads=1); bt=time.perf_counter()-t
for ef in (64,128):
    idx.expansion_search=ef
    t=time.perf_counter(); got=[idx.search(qv[j],K, threads=1).keys for j in range(NQ)]; qt=(time.perf_counter()-t)/NQ
    res[f"usearch16_ef{ef}"]=dict(build_s=bt, q_ms=qt*1000, recall=rec(got,ex_all))
    print(res[f"usearch16_ef{ef}"], flush=True)
json.dump({k: {m: float(v) for m, v in r.items()} for k, r in res.items()}, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "ann_choice.json"), "w"), indent=1)
