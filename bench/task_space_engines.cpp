// The task space of the engine (rd_task_space) against Pinocchio's C++ in one process, on the same URDF:
// built by bench/bench_task_space.py --engines, which passes the engine's model text and the URDF.
//
//   task_space_engines <engine model text> <urdf> <frame> [calls]
//
// Prints one line per quantity: "name ours_ns pinocchio_ns", the best of 15 rounds of `calls` calls each
// (the two alternating, so that both see the same machine), every call at a new q.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/parsers/urdf.hpp>

extern "C" {
#include "engine.h"
}

namespace {

using Clock = std::chrono::steady_clock;
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double g_sink = 0.0;  // every result read, so that no call is optimised away

template <class F>
double per_call_ns(F &&f, int calls)
{
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
        f(i);
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls;
}

// Best of 15 alternating rounds: (ours, theirs) [ns per call].
template <class A, class B>
std::pair<double, double> race(A &&ours, B &&theirs, int calls)
{
    double a = 1e300, b = 1e300;
    for (int round = 0; round < 15; ++round) {
        a = std::min(a, per_call_ns(ours, calls));
        b = std::min(b, per_call_ns(theirs, calls));
    }
    return {a, b};
}

std::string slurp(const char *path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s <engine model text> <urdf> <frame> [calls]\n", argv[0]);
        return 2;
    }
    const int calls = argc > 4 ? std::atoi(argv[4]) : 2000;
    const std::string text = slurp(argv[1]);
    rd_model_size z;
    char err[256];
    if (rd_model_text_size(text.c_str(), &z, err, sizeof err) != RD_OK) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
    }
    rd_model m;
    void *extra = nullptr;
    if (rd_model_parse(&m, text.c_str(), rd_work_bytes(z.nb, z.nq), &extra, err, sizeof err) != RD_OK) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
    }
    rd_work w;
    rd_work_bind(&w, extra, m.nb, m.nq);

    pinocchio::Model pm;
    pinocchio::urdf::buildModel(argv[2], pm);
    pinocchio::Data pd(pm);
    const int nq = m.nq;
    if (pm.nq != nq || pm.nv != nq) {
        std::fprintf(stderr, "Pinocchio's coordinates differ (nq %d, nv %d; ours %d)\n", pm.nq, pm.nv, nq);
        return 1;
    }
    for (int k = 0; k < nq; ++k) {  // the same joint order, and our rotor inertia as Pinocchio's armature
        if (pm.names[static_cast<size_t>(k) + 1] != m.joint_name[k]) {
            std::fprintf(stderr, "joint %d: %s against Pinocchio's %s\n", k, m.joint_name[k], pm.names[k + 1].c_str());
            return 1;
        }
        pm.armature[k] = m.joint[k].Ia;
    }
    pd = pinocchio::Data(pm);
    const pinocchio::FrameIndex fid = pm.getFrameId(argv[3]);
    int k = -1;
    for (int f = 0; f < m.nf; ++f)  // our frame of that name: the same placement as Pinocchio's at q = 0
        if (k < 0) {
            rd_body_poses(&m, std::vector<double>(nq, 0.0).data(), &w);
            double T[16];
            rd_frame_pose(&m, &w, f, T);
            pinocchio::framesForwardKinematics(pm, pd, pinocchio::neutral(pm));
            const Eigen::Matrix4d Tp = pd.oMf[fid].toHomogeneousMatrix();
            double d = 0.0;
            for (int x = 0; x < 16; ++x)
                d = std::max(d, std::abs(T[x] - Tp(x / 4, x % 4)));
            if (d < 1e-12 && m.frame[f].body >= 0)
                k = f;
        }
    if (k < 0 || fid >= static_cast<pinocchio::FrameIndex>(pm.nframes)) {
        std::fprintf(stderr, "frame %s not found on both sides\n", argv[3]);
        return 1;
    }

    // `calls` states: q, qd
    std::vector<Eigen::VectorXd> qs, vs;
    std::srand(1);
    for (int i = 0; i < calls; ++i) {
        qs.push_back(Eigen::VectorXd::Random(nq));
        vs.push_back(Eigen::VectorXd::Random(nq));
    }
    Matrix J(6, nq), Jb(nq, 6), N(nq, nq), L(6, 6);  // ours: row-major, as rd_task_space writes
    double T[16], bias[6];
    const rd_task task = {k, RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
    auto ours = [&](rd_task_space_out out, bool motion) {
        return [&, out, motion](int i) {
            const rd_input in = {qs[i].data(), motion ? vs[i].data() : nullptr, nullptr, nullptr, nullptr, 0};
            const int st = rd_task_space(&m, &in, &task, &out, &w);
            g_sink += st + (out.Lambda ? out.Lambda[0] : out.J ? out.J[0] : out.bias ? out.bias[0] : out.T[3]);
        };
    };
    // Pinocchio's side as an Eigen user writes it without allocation: fixed-size 6 x 6 matrices, A^-1 read
    // through its upper triangle (computeMinverse fills it), or A's LLT on its upper triangle (crba's)
    using Matrix6 = Eigen::Matrix<double, 6, 6>;
    pinocchio::Data::Matrix6x Jp(6, nq);
    Eigen::MatrixXd MiJt(nq, 6), Jbp(nq, 6), Np(nq, nq);
    Matrix6 Sp, Lp;
    Eigen::LLT<Matrix6> llt6;
    Eigen::LLT<Eigen::MatrixXd, Eigen::Upper> lltM(nq);
    auto pin_lambda = [&](int i, bool crba) {
        Jp.setZero();
        pinocchio::computeFrameJacobian(pm, pd, qs[i], fid, pinocchio::LOCAL_WORLD_ALIGNED, Jp);
        if (crba) {  // A by crba and its Cholesky factor, as ours
            pinocchio::crba(pm, pd, qs[i], pinocchio::Convention::WORLD);
            lltM.compute(pd.M);
            MiJt = Jp.transpose();
            lltM.solveInPlace(MiJt);
        } else {  // A^-1 by computeMinverse, as CRISP and most Pinocchio users write it
            pinocchio::computeMinverse(pm, pd, qs[i]);
            MiJt.noalias() = pd.Minv.selfadjointView<Eigen::Upper>() * Jp.transpose();
        }
        Sp.noalias() = Jp * MiJt;
        llt6.compute(Sp);
        Lp.setIdentity();
        llt6.solveInPlace(Lp);
    };
    {  // the same numbers first: J, Jdot qd, Lambda, J_bar and N at the first state
        const rd_input in = {qs[0].data(), vs[0].data(), nullptr, nullptr, nullptr, 0};
        const rd_task_space_out out = {nullptr, J.data(), nullptr, bias, L.data(), Jb.data(), N.data()};
        if (rd_task_space(&m, &in, &task, &out, &w) != RD_OK) {
            std::fprintf(stderr, "rd_task_space failed at the first state\n");
            return 1;
        }
        pin_lambda(0, false);
        Jbp.noalias() = MiJt * Lp;
        Np.setIdentity();
        Np.noalias() -= Jp.transpose() * Jbp.transpose();
        pinocchio::forwardKinematics(pm, pd, qs[0], vs[0], Eigen::VectorXd::Zero(nq));
        const pinocchio::Motion a = pinocchio::getFrameClassicalAcceleration(pm, pd, fid, pinocchio::LOCAL_WORLD_ALIGNED);
        Eigen::Matrix<double, 6, 1> ap;
        ap << a.linear(), a.angular();
        const double d[5] = {(J - Jp).cwiseAbs().maxCoeff(), (Eigen::Map<Eigen::Matrix<double, 6, 1>>(bias) - ap).cwiseAbs().maxCoeff(),
                             (L - Lp).cwiseAbs().maxCoeff() / Lp.cwiseAbs().maxCoeff(), (Jb - Jbp).cwiseAbs().maxCoeff() / Jbp.cwiseAbs().maxCoeff(),
                             (N - Np).cwiseAbs().maxCoeff()};
        for (double x : d)
            if (!(x < 1e-9)) {
                std::fprintf(stderr, "the two engines disagree: J %g, Jdot qd %g, Lambda %g, J_bar %g, N %g\n", d[0], d[1], d[2], d[3], d[4]);
                return 1;
            }
    }
    const std::vector<std::pair<const char *, std::pair<double, double>>> rows = {
        {"frame pose", race(ours({T, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr}, false), [&](int i) {
             pinocchio::forwardKinematics(pm, pd, qs[i]);
             g_sink += pinocchio::updateFramePlacement(pm, pd, fid).translation()[0];
         }, calls)},
        {"Jacobian (LOCAL_WORLD_ALIGNED)", race(ours({nullptr, J.data(), nullptr, nullptr, nullptr, nullptr, nullptr}, false), [&](int i) {
             Jp.setZero();
             pinocchio::computeFrameJacobian(pm, pd, qs[i], fid, pinocchio::LOCAL_WORLD_ALIGNED, Jp);
             g_sink += Jp(0, 0);
         }, calls)},
        {"Jdot qd (classical acceleration)", race(ours({nullptr, nullptr, nullptr, bias, nullptr, nullptr, nullptr}, true), [&](int i) {
             pinocchio::forwardKinematics(pm, pd, qs[i], vs[i], Eigen::VectorXd::Zero(nq));
             g_sink += pinocchio::getFrameClassicalAcceleration(pm, pd, fid, pinocchio::LOCAL_WORLD_ALIGNED).linear()[0];
         }, calls)},
        {"Lambda (computeMinverse)", race(ours({nullptr, nullptr, nullptr, nullptr, L.data(), nullptr, nullptr}, false), [&](int i) {
             pin_lambda(i, false);
             g_sink += Lp(0, 0);
         }, calls)},
        {"Lambda (crba + LLT)", race(ours({nullptr, nullptr, nullptr, nullptr, L.data(), nullptr, nullptr}, false), [&](int i) {
             pin_lambda(i, true);
             g_sink += Lp(0, 0);
         }, calls)},
        {"J, Lambda, J_bar, N (computeMinverse)", race(ours({nullptr, J.data(), nullptr, nullptr, L.data(), Jb.data(), N.data()}, false), [&](int i) {
             pin_lambda(i, false);
             Jbp.noalias() = MiJt * Lp;
             Np.setIdentity();
             Np.noalias() -= Jp.transpose() * Jbp.transpose();
             g_sink += Np(0, 0);
         }, calls)},
    };
    for (const auto &row : rows)
        std::printf("%s\t%.1f\t%.1f\n", row.first, row.second.first, row.second.second);
    std::fprintf(stderr, "(checksum %g)\n", g_sink);
    rd_model_free(&m);
    return 0;
}
