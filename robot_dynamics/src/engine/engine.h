/* The engine: the recursions of robot_dynamics in C99 (the model half and the data half).
 *
 * The model (rd_model) is packed once per RobotModel and never written after: bodies in tree
 * order (parent[i] < i), the independent joints' rotor inertia and friction, the secondary
 * links of a coupled drive train and the frames of the description. The data (rd_work) holds
 * every intermediate quantity of one state as named arrays, their sizes listed once in
 * RD_WORK_ARRAYS (as MuJoCo's mjdata.h does). Spatial vectors are Featherstone's
 * [angular; linear] in body coordinates; 3x3 matrices are row-major.
 *
 * Every algorithm returns a status (RD_OK or one of the codes below), never aborts: the
 * Python side turns it into the package's error.
 */
#ifndef RD_ENGINE_H
#define RD_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    RD_OK = 0,
    RD_BAD_SIZE = 1,               /* an input of the wrong length */
    RD_BAD_INPUT = 2,              /* a NaN or infinite input */
    RD_BAD_OUTPUT = 3,             /* a result that is not finite */
    RD_NOT_POSITIVE_DEFINITE = 4,  /* the joint-space inertia matrix (joint-space solve) */
    RD_TASK_SINGULAR = 5,          /* J A^-1 J^T not positive definite: dependent task rows (rd_task_space) */
    RD_SINGULAR = 1000             /* + i: body i's articulated inertia about its joint is not positive */
};

enum { RD_REVOLUTE = 0, RD_PRISMATIC = 1 };

/* A rigid-body inertia about the body origin: mass, first moment h = m c, rotational inertia Io. */
typedef struct {
    double m;
    double h[3];
    double Io[9];
} rd_inertia;

/* A moving body and the joint that carries it. */
typedef struct {
    int parent;     /* parent body, -1: the base */
    int type;       /* RD_REVOLUTE or RD_PRISMATIC */
    int joint;      /* the independent joint k that drives it: q_body = mult q[k] + offset (mimic) */
    int last;       /* derived: its subtree is bodies i..last (the bodies in depth-first order); -1: they are not */
    int coord;      /* derived: k when axis is exactly +-e_k (k = 0, 1, 2: x, y, z), else -1 */
    double mult, offset;
    double axis[3]; /* unit joint axis in the body frame */
    double E0[9];   /* body_R_parent at q = 0 */
    double KE0[9];  /* [a]x E0 and a a^T E0: E(q) = c E0 - s [a]x E0 + (1 - c) a a^T E0 (Rodrigues) */
    double AE0[9];
    double r0[3];   /* joint origin in parent coordinates */
    double d[3];    /* prismatic slide direction in parent coordinates, E0^T a */
    rd_inertia inertia; /* the body's rigid-body inertia */
    double J0[16];  /* derived: its pseudo-inertia [S h; h^T m], S = tr(Io)/2 1 - Io (rd_crba) */
} rd_body;

/* An independent joint: rotor inertia Ia (Khalil [7.29]) and friction (Khalil [7.26]). */
typedef struct {
    double Ia, Fv, Fc;
    double Fs;      /* Fst - Fc: the static friction's excess over Coulomb's */
    double B;       /* Stribeck coefficient [s/rad] */
} rd_joint;

/* A secondary link of a coupled drive train (Chen & Wang): its spin beta = b . theta about e. */
typedef struct {
    int carrier;    /* body carrying it, -1: the base */
    double axis[3]; /* e_s in the carrier's frame */
    double inertia; /* axial inertia I_s */
    const double *b;/* b_s, nq coefficients (eq. 11), inside rd_model.b */
} rd_secondary;

/* A frame of the description (a URDF link), fixed to a body. */
typedef struct {
    int body;       /* -1: the base */
    double R[9];    /* body_R_frame */
    double p[3];    /* body_p_frame */
} rd_frame;

typedef struct {
    int nb, nq, nr, nf;
    int tree;       /* 1: no mimic joint and no coupled drive train: the articulated-body recursion applies */
    double gravity[3];
    rd_body *body;        /* nb */
    rd_joint *joint;      /* nq */
    rd_secondary *secondary; /* nr */
    double *b;            /* nr * nq */
    rd_frame *frame;      /* nf */
    /* The description's side of the independent joints, read from the text form only (NULL from
     * the fields): names in model order, effort limits [N m or N] (inf: none), position limits
     * [rad or m] (-inf, inf: none) and velocity limits [rad/s or m/s] (inf: none). */
    const char *const *joint_name; /* nq */
    const double *effort_limit;    /* nq */
    const double *position_lower;  /* nq */
    const double *position_upper;  /* nq */
    const double *velocity_limit;  /* nq */
    /* The frames' names in frame order (the description's links, base first), read from the text
     * form's optional frame_names line; NULL from the fields or from a text without it. */
    const char *const *frame_name; /* nf */
    void *memory;         /* the one block all of the above live in (rd_model_free) */
} rd_model;

/* -- the model, built once ---------------------------------------------------------------------------
 * The packed model's fields, listed once (as MuJoCo's mjmodel.h): name and count in nb bodies, nq
 * joints, nr secondary links and nf frames. Per body: parent (-1: the base), type (0 revolute,
 * 1 prismatic), the independent joint that drives it and its mimic map mult, offset, the unit axis
 * in the body frame, E0 = body_R_parent at q = 0, r0 the joint origin in parent coordinates, mass,
 * first moment h = m c and rotational inertia Io about the body origin. Per joint: rotor inertia
 * Ia, friction Fv, Fc, Fs = Fst - Fc and the Stribeck coefficient B (Khalil [7.26], [7.29]). Per
 * secondary link: carrier body, axis e_s, axial inertia I_s and b_s (Chen & Wang eq. 11). Per
 * frame: its body, body_R_frame and body_p_frame. Then gravity. Python's packer
 * (robot_dynamics.engine.layout) writes the same list. */
#define RD_MODEL_FIELDS(X)                                                                            \
    X(parent, nb) X(type, nb) X(joint, nb) X(mult, nb) X(offset, nb) X(axis, 3 * nb) X(E0, 9 * nb)    \
    X(r0, 3 * nb) X(mass, nb) X(h, 3 * nb) X(Io, 9 * nb)                                              \
    X(Ia, nq) X(Fv, nq) X(Fc, nq) X(Fs, nq) X(B, nq)                                                  \
    X(carrier, nr) X(secondary_axis, 3 * nr) X(secondary_inertia, nr) X(b, nr * nq)                   \
    X(frame_body, nf) X(frame_R, 9 * nf) X(frame_p, 3 * nf) X(gravity, 3)

enum {
#define RD_FIELD_ENUM(name, count) RD_FIELD_##name,
    RD_MODEL_FIELDS(RD_FIELD_ENUM)
#undef RD_FIELD_ENUM
    RD_FIELD_COUNT
};
extern const char *const rd_model_field_names[RD_FIELD_COUNT];

/* The sizes of a model: nb, nq, nr, nf, tree. */
typedef struct {
    int nb, nq, nr, nf, tree;
} rd_model_size;

/* The number of values of field k for a model of size z. */
size_t rd_model_field_length(int k, const rd_model_size *z);

/* Builds *m from the fields x[k] (rd_model_field_length(k) values each) in one block of memory
 * allocated here, `extra` bytes longer at its end (*extra_at, 64-byte aligned, zeroed, e.g. for a
 * workspace; extra_at may be NULL). RD_OK, or RD_BAD_INPUT with the reason in err (errlen bytes). */
int rd_model_build(rd_model *m, const rd_model_size *z, const double *const x[RD_FIELD_COUNT], size_t extra,
                   void **extra_at, char *err, size_t errlen);

/* The model's text form, as `robot-dynamics engine-model` prints it from a URDF and its drive-train
 * YAML (the package's one loader): a first line "robot_dynamics-engine-model 1 <robot name>",
 * then one line per entry: "nb|nq|nr|nf|tree <integer>", "joint_names <nq> <name>...",
 * "effort_limit <nq> <value>..." and each field of RD_MODEL_FIELDS as "<name> <count> <value>...",
 * optionally "position_lower", "position_upper" and "velocity_limit" (<nq> values each; absent: no
 * limit) and "frame_names <nf> <name>..." (absent: frame_name NULL), in any order, values as C's
 * strtod reads them (17 significant digits: the same doubles). Names have no white space and fewer
 * than 256 bytes. Builds *m as rd_model_build does, with joint_name, the limits and frame_name set.
 * Configuration time only. */
int rd_model_parse(rd_model *m, const char *text, size_t extra, void **extra_at, char *err, size_t errlen);

/* The sizes of the model of a text form (to size the `extra` of rd_model_parse, e.g. for
 * rd_work_bytes(z.nb, z.nq)): RD_OK or RD_BAD_INPUT with the reason in err. */
int rd_model_text_size(const char *text, rd_model_size *z, char *err, size_t errlen);

/* Frees the block of a built or parsed model and clears *m. */
void rd_model_free(rd_model *m);

/* The index of the joint named `name`, or -1 (a parsed model; -1 when it has no names). */
int rd_joint_index(const rd_model *m, const char *name);

/* The index k of m->frame of the frame named `name`, or -1 (a parsed model with frame names; -1 when
 * it has none). */
int rd_frame_index(const rd_model *m, const char *name);

/* The data of one state: name, element type, count (nb bodies, nq joints). One list, from which
 * the struct, its size and its binding to one block of memory are derived. */
#define RD_WORK_ARRAYS(X)                                                                          \
    X(E, double, 9 * nb)             /* body_R_parent of each joint transform */                  \
    X(r, double, 3 * nb)             /* body origin in parent coordinates */                      \
    X(v, double, 6 * (nb + 1))       /* body velocities; row nb is the base */                    \
    X(a, double, 6 * (nb + 1))       /* body accelerations; row nb is the base (a_0 = [0; -g]) */ \
    X(f, double, 6 * nb)             /* body forces (rnea) */                                     \
    X(c, double, 6 * nb)             /* velocity-product accelerations v_i x S_i qd_i */          \
    X(R, double, 9 * nb)             /* base_R_body */                                            \
    X(p, double, 3 * nb)             /* body origin in the base frame */                          \
    X(Ic, double, 16 * nb)           /* composite inertias (crba): pseudo-inertias [S h; h^T m] */ \
    X(Fcol, double, 9 * nb + 148)    /* their columns F = Ic S (crba): 6 rows of max(nb + 4, 16), */ \
                                     /* padded; the angles, sines and cosines (as long each)       */ \
    X(IA, double, 36 * nb)           /* articulated inertias, 6x6 symmetric (aba) */              \
    X(pA, double, 6 * nb)            /* articulated bias forces (aba) */                          \
    X(U, double, 6 * nb)             /* U_i = IA_i S_i (aba) */                                   \
    X(D, double, nb)                 /* D_i = S_i^T U_i + Ia (aba) */                             \
    X(u, double, nb)                 /* u_i = tau_i - S_i^T pA_i (aba) */                         \
    X(H, double, nq * nq)            /* joint-space inertia matrix (the joint-space solve) */     \
    X(h, double, nq)                 /* bias torques (the joint-space solve) */                   \
    X(zero, double, nq)              /* a zero joint vector */                                    \
    X(sU, double, nq)                /* a secondary link's spin momentum seen by each joint (crba) */ \
    X(dv, double, 6 * (nb + 1))      /* tangents of v, a, f and the frames' rotation along one     */ \
    X(da, double, 6 * (nb + 1))      /* coordinate (the derivatives); row nb is the base           */ \
    X(df, double, 6 * nb)                                                                          \
    X(drho, double, 3 * (nb + 1))                                                                  \
    X(moved, int, nb)                /* 1: the body moves with the coordinate (derivatives)        */ \
    X(dtau, double, nq)              /* one column of a derivative                                 */ \
    X(L, double, nq * nq)            /* a Cholesky factor (the derivatives of direct dynamics)     */ \
    X(acc, double, nq)               /* the accelerations of direct dynamics (its derivatives)     */ \
    X(oS, double, 6 * nb)            /* base-frame quantities of the derivatives of a tree: joint  */ \
    X(ov, double, 6 * (nb + 1))      /* axes, velocities, accelerations (row nb: the base), each   */ \
    X(oa, double, 6 * (nb + 1))      /* body's inertia, momentum and force, the subtrees' inertia, */ \
    X(oY, rd_inertia, nb)            /* inertia rate, momentum and force (the composites, c), and  */ \
    X(oh, double, 6 * nb)            /* the rows P, Q of every body                                */ \
    X(of, double, 6 * nb)                                                                          \
    X(oYc, rd_inertia, nb)                                                                         \
    X(oBc, double, 12 * nb)          /* the subtrees' inertia rates: X (9) and c (3) each          */ \
    X(ohc, double, 6 * nb)                                                                         \
    X(oFc, double, 6 * nb)                                                                         \
    X(oP, double, 6 * nb)                                                                          \
    X(oQ, double, 6 * nb)                                                                          \
    X(oG, double, 12 * nb)           /* per body j: (G_j, H_j) by component                        */ \
    X(oW, double, 24 * nb)           /* per body j: (alpha_j, dv_j), (dv_j, S_j)                   */ \
    X(x4, double, 4 * (80 * nb + 12 + nq)) /* four states' recursion, lane by lane (rd_rnea4, rd_aba4) */ \
    X(law, double, nq)               /* the control law's joint accelerations w (rd_computed_torque) */ \
    X(uf, double, nq)                /* the plant's torques less friction (rd_plant_accel)         */ \
    X(rk, double, 8 * nq)            /* RK4's stage state, k2, k3, k4 (rd_plant_rk4)               */ \
    X(step, double, 4 * nq)          /* the stepped state and its k1 (rd_plant_step)               */ \
    X(tJ, double, 6 * nq)            /* the task space (rd_task_space): the task rows of J,        */ \
    X(tY, double, 6 * nq)            /* Y = L^-1 J^T (A = L L^T), Z = A^-1 J^T and J_bar^T, rows   */ \
    X(tZ, double, 6 * nq)            /* of nq each; J A^-1 J^T, its factor's inverse, Lambda (r x r */ \
    X(tB, double, 6 * nq)            /* each) and 1 / L_aa (nq)                                    */ \
    X(tS, double, 3 * 36 + nq)                                                                    \
    X(cN, double, nq * nq)           /* the compliant laws (rd_compliant_control): A^-1 tau_0 (nq  */ \
    X(cA, double, nq)                /* of it), the diagonal of A and the posture's torques tau_0  */ \
    X(c0, double, nq)

typedef struct {
#define RD_WORK_FIELD(name, type, count) type *name;
    RD_WORK_ARRAYS(RD_WORK_FIELD)
#undef RD_WORK_FIELD
} rd_work;

size_t rd_work_bytes(int nb, int nq);
void rd_work_bind(rd_work *w, void *memory, int nb, int nq);

/* A wrench row of f_ext: body, point (body frame), force (3), moment about the point (3), base axes. */
enum { RD_WRENCH = 10 };

/* -- the algorithms' input ------------------------------------------------------------------------------
 * As Pinocchio's rnea(model, data, q, v, a) and MuJoCo's mj_rne(m, d, ...): the model (rd_model), the
 * data (rd_work), the state and its wrenches (rd_input), and the options of the call (rd_options),
 * whose NULL (or NULL gravity) means the model's own gravity, no friction. */

/* The state of one call (or of four: rows of nq values, q[l * nq + k], for rd_rnea4 and rd_aba4) and
 * the external wrenches on it. Vectors have nq values in model order. */
typedef struct {
    const double *q;   /* joint positions [rad or m] */
    const double *qd;  /* joint velocities [rad/s or m/s] */
    const double *qdd; /* joint accelerations [rad/s^2 or m/s^2]: the input of inverse dynamics (rnea) */
    const double *tau; /* joint torques [N m or N]: the input of direct dynamics (aba) */
    const double *fx;  /* nfx wrench rows of RD_WRENCH values each (Khalil's f_en [7.30]), or NULL */
    int nfx;           /* rows of fx (0: no wrench; the four-state calls take none) */
} rd_input;

/* The options of a call, kept apart from the state: gravity and friction. */
typedef struct {
    const double *gravity; /* (3) gravity [m/s^2] in base axes; NULL: the model's own m->gravity */
    int friction;          /* 1: the joints' friction Gamma_f (Khalil [7.26]) in the torques; 0: none */
    double smooth;         /* > 0: the Coulomb sign smoothed to tanh(qd / smooth), smooth [rad/s or m/s]; 0: sign(qd) */
} rd_options;

/* The algorithms, one state each; o NULL: rd_options {NULL, 0, 0.0}. out: nq values unless said. */

/* Inverse dynamics tau = A qdd + C qd + Q + Gamma_f + J^T f_en (Khalil 7.5) at (in->q, in->qd, in->qdd). */
int rd_rnea(const rd_model *m, const rd_input *in, const rd_options *o, double *tau, rd_work *w);
/* The joint-space inertia matrix A(q): H (nq x nq, row-major) [kg m^2, kg m or kg]. */
int rd_crba(const rd_model *m, const double *q, double *H, rd_work *w);

/* Four states at once, each in one lane of a vector register where the compiler has them (GCC,
 * Clang): RD_LANES 4, else 1 (and no rd_rnea4). The batches take four rows a call. */
#if defined(__GNUC__) && !defined(RD_NO_LANES) && !defined(__cplusplus)
#define RD_LANES 4
#else
#define RD_LANES 1
#endif

/* rd_rnea of four states (in: rows of nq values, q[l * nq + k]; its wrenches not read), each lane's
 * operations those of one rd_rnea call, in the same order: the same doubles. tau: four rows; status:
 * RD_OK or RD_BAD_OUTPUT per state. */
void rd_rnea4(const rd_model *m, const rd_input *in, const rd_options *o, double *tau, int status[4], rd_work *w);
/* rd_aba of four states of a tree (m->tree; no external wrenches), the same way. */
void rd_aba4(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, int status[4], rd_work *w);
/* Direct dynamics qdd = A^-1 (tau - C qd - Q - Gamma_f - J^T f_en) at (in->q, in->qd, in->tau): the
 * articulated-body recursion for a tree (Featherstone 7.3), else the joint-space solve (Khalil 7.6.1). */
int rd_aba(const rd_model *m, const rd_input *in, const rd_options *o, double *qdd, rd_work *w);
/* dtau/dq and dtau/dqd (nq x nq, row-major: [j, k] = d tau_j / d q_k) of rd_rnea at in, and M = A(q)
 * when M is not NULL. */
int rd_rnea_derivatives(const rd_model *m, const rd_input *in, const rd_options *o, double *dtau_dq, double *dtau_dqd,
                        double *M, rd_work *w);
/* dqdd/dq, dqdd/dqd (nq x nq) of rd_aba at in, and Minv = A(q)^-1 (nq x nq). */
int rd_aba_derivatives(const rd_model *m, const rd_input *in, const rd_options *o, double *dqdd_dq, double *dqdd_dqd,
                       double *Minv, rd_work *w);
int rd_energy(const rd_model *m, const double *q, const double *qd, const double *g, double out[2], rd_work *w);
void rd_body_poses(const rd_model *m, const double *q, rd_work *w);
void rd_frame_pose(const rd_model *m, const rd_work *w, int k, double T[16]);
void rd_jacobian(const rd_model *m, const rd_work *w, int k, double *J);
void rd_point_motion(const rd_model *m, const double *q, const double *qd, int k, double vel[6], double acc[6], rd_work *w);
void rd_forward(const rd_model *m, const double *q, const double *qd, const double *qdd, const double *g, rd_work *w);
double rd_friction(const rd_model *m, int k, double qd, double smooth);
int rd_finite(const double *x, int n);
extern int rd_tangent_derivatives; /* 1: the derivatives by the recursion's tangents only (a test switch) */

/* -- task space (task_space.c) -------------------------------------------------------------------------
 * One frame's task-space kinematics and the operational-space quantities of Khatib (1987): rows
 * [linear; angular] as rd_jacobian's, for the velocity of the frame's origin, expressed in the
 * base's axes (Pinocchio's LOCAL_WORLD_ALIGNED, Khalil's J_n in frame 0) or in the frame's own
 * axes (Pinocchio's LOCAL: the same rows rotated by R^T, R = base_R_frame). */

enum { RD_LOCAL_WORLD_ALIGNED = 0, RD_LOCAL = 1 };
#define RD_TASK_ALL_ROWS 0x3F          /* the six rows [vx, vy, vz, wx, wy, wz] */
#define RD_TASK_PIVOT 1e-12            /* a pivot of J A^-1 J^T at most this share of its diagonal: singular */

/* The task: a frame, the axes, the rows kept and the damping of the task inertia. */
typedef struct {
    int frame;      /* the frame k of m->frame (0 <= k < nf) */
    int reference;  /* RD_LOCAL_WORLD_ALIGNED (base axes at the frame's origin) or RD_LOCAL (the frame's axes) */
    int rows;       /* bit i: row i of [vx, vy, vz, wx, wy, wz] kept (0: all six); r rows, in that order */
    double damping; /* lambda >= 0: Lambda = (J A^-1 J^T + lambda^2 1)^-1 (the damped variant near
                     * singularities; lambda^2 in [1/kg] on translation rows, [1/(kg m^2)] on rotation
                     * rows, one number for both); 0: the exact inverse */
} rd_task;

/* What rd_task_space writes: each pointer NULL (not computed) or an array of the size given, row-major. */
typedef struct {
    double *T;      /* (4 x 4) T_base_frame */
    double *J;      /* (r x nq) the task rows of the frame Jacobian: v = J qd [m/s, rad/s] */
    double *vel;    /* (r) J qd: the frame's twist [m/s, rad/s] (reads in->qd) */
    double *bias;   /* (r) Jdot qd: the classical acceleration of the frame's origin and its angular
                     * acceleration at qdd = 0 without gravity [m/s^2, rad/s^2] (reads in->qd):
                     * Pinocchio's getFrameClassicalAcceleration after forwardKinematics(q, qd, 0) */
    double *Lambda; /* (r x r) the task inertia (J A^-1 J^T)^-1 [kg, kg m, kg m^2] by Cholesky factors of
                     * A (rd_crba) and of J A^-1 J^T = Y^T Y, L Y = J^T: no inverse of A is formed */
    double *Jbar;   /* (nq x r) the dynamically consistent inverse A^-1 J^T Lambda */
    double *N;      /* (nq x nq) the null-space projector of the torques 1 - J^T Jbar^T: J A^-1 N = 0,
                     * N N = N and J N^T = 0 (exactly for damping 0, to O(lambda^2 |Lambda|) else) */
} rd_task_space_out;

/* One frame's task quantities at in->q (and in->qd for vel and bias; wrenches not read), those of
 * out that are not NULL; A, its factor and the scratch in w (tJ, tY, tZ, tB, tS, H). RD_BAD_SIZE for
 * a bad task (frame out of range, unknown reference, rows beyond RD_TASK_ALL_ROWS, damping negative
 * or not finite; in, out or t NULL), RD_BAD_INPUT for a non-finite q (or qd), RD_NOT_POSITIVE_DEFINITE for A,
 * RD_TASK_SINGULAR where a pivot of J A^-1 J^T + lambda^2 1 is at most RD_TASK_PIVOT of its diagonal
 * (rows that lose rank: a singular pose, or a frame on the fixed base), RD_BAD_OUTPUT for a result
 * that is not finite. No allocation. */
int rd_task_space(const rd_model *m, const rd_input *in, const rd_task *t, const rd_task_space_out *out, rd_work *w);

/* -- compliant control of one frame on its task inertia (compliant.c) ----------------------------------
 * Cartesian impedance (Hogan 1985; Albu-Schaeffer, Ott, Frese and Hirzinger, ICRA 2003) and Khatib's
 * operational-space control (1987; Khalil [9.36]) of one frame's pose in base axes, with a posture
 * task through the null-space projector N, the task inertia damped near singularities, and the task
 * wrench and the torque rate saturated: the law of robot_dynamics.control.CartesianImpedance and
 * OperationalSpaceControl, one tick, no allocation. The pose error is e = [p_d - p; log(R_d R^T)]
 * (base axes [m, rad]), its rate e_dot = twist_d - J qd. */

enum { RD_CARTESIAN_IMPEDANCE = 0, RD_OPERATIONAL_SPACE = 1 };

/* The options of a compliant law; r = the task's rows, their values in the order of the rows' bits. */
typedef struct {
    int law;                      /* RD_CARTESIAN_IMPEDANCE or RD_OPERATIONAL_SPACE */
    rd_task task;                 /* frame and rows, reference RD_LOCAL_WORLD_ALIGNED (the error is in base
                                   * axes); damping: the largest lambda of the singular damping (>= 0) */
    const double *kp;             /* (r) impedance: the stiffness K [N/m on x, y, z; N m/rad on rx, ry, rz]
                                   * (> 0); operational space: Kp [1/s^2] (>= 0) */
    const double *kd;             /* (r) operational space: Kd [1/s] (>= 0); impedance: not read */
    double damping_ratio;         /* impedance: zeta (> 0) of every mode of Lambda x_dd + D x_d + K x = 0 */
    const double *null_stiffness; /* (nq) the posture's K_n [N m/rad or N/m] (>= 0) */
    double null_damping_ratio;    /* zeta_n (> 0): D_n = 2 zeta_n sqrt(K_n A_jj) */
    const double *posture;        /* (nq) q_n [rad or m] (finite) */
    double max_force, max_moment; /* the task wrench's force and moment norms [N, N m] (> 0; INFINITY: none) */
    double max_torque_rate;       /* the largest change of a joint torque [N m/s or N/s] (> 0; INFINITY: none) */
    double singular_threshold;    /* J's smallest singular value (>= 0, finite) below which Lambda is damped:
                                   * lambda^2 = damping^2 (1 - (s_min / threshold)^2) */
    double smooth;                /* the friction's Coulomb sign smoothed to tanh(qd / smooth) [rad/s or m/s]
                                   * (> 0; 0: sign(qd), finite) */
    const double *lower, *upper;  /* (nq) the joints' position limits [rad or m] (-INFINITY, INFINITY: none;
                                   * lower <= upper), both NULL: no joint-limit barrier */
    double limit_margin;          /* the barrier's band inside each limit [rad or m] (>= 0, finite; 0: none; at
                                   * most a quarter of the joint's range):
                                   * in the band at the upper limit u, joint j's acceleration is at most
                                   * omega^2 (u - margin - q_j) - 2 omega qd_j (a critically damped return to
                                   * the band's edge; a joint that enters it at speed v goes at most
                                   * v / (e omega) past the edge), at the lower one at least its mirror; the
                                   * torques get A delta for the acceleration cut delta, so that the other
                                   * joints' accelerations stay as the law made them */
    double limit_frequency;       /* omega [rad/s] (> 0, finite; read with a band > 0 or velocity limits) */
    const double *velocity;       /* (nq) the joints' velocity limits v [rad/s or m/s] (> 0; INFINITY: none), NULL:
                                   * no velocity barrier. Faster than v / 2, joint j's acceleration away from
                                   * zero is at most omega (v - |qd_j|): its speed approaches v at the rate
                                   * omega and does not pass it; and at a known tick (the input's dt > 0) at
                                   * most (v - |qd_j|) / dt at any speed, so that no single tick takes it past
                                   * v. The position barrier's bound wins where they disagree */
} rd_compliant_options;

/* What one tick reads: the measured state, the task reference, the last tick's torques. */
typedef struct {
    const double *q, *qd;   /* (nq) measured [rad or m, rad/s or m/s] */
    const double *pose;     /* (4 x 4, row-major) T_base_frame desired [m] */
    const double *twist;    /* (6) [v; w] desired, base axes [m/s, rad/s] */
    const double *accel;    /* (6) [a; alpha] desired [m/s^2, rad/s^2]: operational space only (impedance: not read) */
    const double *tau_prev; /* (nq) the last tick's torques [N m or N], or NULL: no rate limit this tick */
    double dt;              /* the time since that tick [s]; <= 0: no rate limit */
} rd_compliant_input;

/* What a tick reports beside its torques. */
typedef struct {
    double s_min;  /* the smallest singular value of the task rows of J (0 with more rows than joints) when it is
                    * below singular_threshold; INFINITY when every one is above (not computed further). |J^T v|,
                    * v the eigenvector of J J^T's smallest eigenvalue: within a few DBL_EPSILON |J| of the
                    * SVD's, DBL_EPSILON |J|^2 / s_2 when the next singular value s_2 is small too */
    double lambda; /* the damping of the task inertia used (0: exact) */
    int singular;  /* 1: s_min < singular_threshold, the task inertia damped */
} rd_compliant_info;

/* One tick of the compliant law o->law: tau (nq) [N m or N] =
 *   impedance:         J^T F, F = K e + D e_dot, D = Lambda Phi diag(2 zeta w) Phi^T Lambda
 *                      (K phi = w^2 Lambda phi, Phi^T Lambda Phi = 1: rd_impedance_damping);
 *   operational space: J^T F, F = Lambda (accel_d + Kd e_dot + Kp e - Jdot qd);
 * F's force and moment rows scaled to max_force and max_moment; plus rnea(q, qd, 0) (C qd + g and the
 * model's friction, its Coulomb sign smoothed by o->smooth) plus N tau_0, tau_0 = K_n (q_n - q) - D_n qd; then each joint
 * within max_torque_rate dt of tau_prev (when given, dt > 0 and the rate finite). Lambda, N from
 * rd_task_space's factors, damped by lambda when s_min < singular_threshold (info->singular; info may
 * be NULL). RD_OK; RD_BAD_SIZE for bad options; RD_BAD_INPUT for a non-finite input; RD_NOT_POSITIVE_DEFINITE
 * or RD_TASK_SINGULAR (dependent rows at no damping); RD_BAD_OUTPUT for non-finite torques (on any status but
 * RD_OK tau holds no torque to apply). Scratch: w's task-space arrays, H, cN, cA, c0. */
int rd_compliant_control(const rd_model *m, const rd_compliant_options *o, const rd_compliant_input *in, double *tau,
                         rd_compliant_info *info, rd_work *w);

/* The impedance's damping D (r x r) [N s/m, N m s/rad] for the stiffness K and the task inertia Lambda
 * (r x r each, symmetric, row-major; r <= 6): every mode of Lambda x_dd + D x_d + K x = 0 of ratio zeta.
 * K diagonal with a positive diagonal, K = C^2: D = 2 zeta C sqrt(C^-1 Lambda C^-1) C, the square root by a
 * symmetric eigen-decomposition (Householder tridiagonal form, implicit QR steps; the design
 * rd_compliant_control runs). Any other K: with Lambda = L L^T (Cholesky) and
 * S = L^-1 K L^-T = U diag(w^2) U^T (cyclic Jacobi rotations), D = L U diag(2 zeta w) U^T L^T. Both are
 * Lambda Phi diag(2 zeta w) Phi^T Lambda with K Phi = Lambda Phi diag(w^2), Phi^T Lambda Phi = 1
 * (w^2 < 0: w = 0). RD_OK, RD_BAD_SIZE (r outside 1..6), RD_BAD_INPUT (non-finite), or
 * RD_NOT_POSITIVE_DEFINITE (Lambda). */
int rd_impedance_damping(int r, const double *K, const double *Lambda, double zeta, double *D);

/* -- control laws and the plant, one tick each (control.c, plant.c) ----------------------------------
 * What the Python controllers (robot_dynamics.control) and the simulated plant compute, for the
 * compiled closed loop and for controllers inside ros2_control's update: no allocation, no lock,
 * a status. Vectors have nq values in model order; q, qd measured; qr, qdr, qddr the reference. */

/* Gravity compensation: tau = Q(q) (rnea at rest, Khalil [9.12]'s Q) plus, when friction is set,
 * the friction feed-forward Gamma_f(qd) of Khalil [7.26] at the velocity v (measured or desired). */
int rd_gravity_compensation(const rd_model *m, const double *q, const double *v, int friction, double *tau, rd_work *w);

/* The reference of a control law: the desired state at the tick (nq values each). */
typedef struct {
    const double *qr;   /* desired positions [rad or m] */
    const double *qdr;  /* desired velocities [rad/s or m/s] */
    const double *qddr; /* desired accelerations [rad/s^2 or m/s^2] (computed torque; PD does not read it) */
} rd_reference;

/* The gains of PD with gravity compensation (nq values each). */
typedef struct {
    const double *kp; /* position gains [N m/rad or N/m] */
    const double *kd; /* velocity gains [N m s/rad or N s/m] */
} rd_pd_gains;

/* PD with gravity compensation (Khalil [9.12] with Q(q)): tau = Kp (qr - q) + Kd (qdr - qd) + Q(q). */
int rd_pd_gravity(const rd_model *m, const rd_pd_gains *k, const double *q, const double *qd, const rd_reference *r,
                  double *tau, rd_work *w);

/* The options of joint-space computed torque (Khalil 9.4.2). */
typedef struct {
    const double *kp, *kd;  /* gains (nq): Kp [1/s^2], Kd [1/s] (of the acceleration w) */
    int position;           /* Khalil [9.29] w = Kp e - Kd qd, instead of [9.24] */
    int predictive;         /* the model on the desired state (Khalil [9.31]) */
    int desired_friction;   /* friction feed-forward at qdr (else the measured velocity's, in rnea) */
    double smooth;          /* > 0: the Coulomb sign smoothed to tanh(v / smooth) [rad/s]; 0: sign(v) */
} rd_computed_torque_options;

/* tau = A^(q) w + H^(q, qd) by Newton-Euler (Khalil 9.4.2.5), w = qddr + Kd (qdr - qd) + Kp (qr - q)
 * [9.24] (or [9.29]). RD_BAD_INPUT for a non-finite input, RD_BAD_OUTPUT for non-finite torques. */
int rd_computed_torque(const rd_model *m, const rd_computed_torque_options *o, const double *q, const double *qd,
                       const rd_reference *r, double *tau, rd_work *w);

/* Clips tau to +-limit (n values, in place); returns the clipped joints' bits (joints past 62: bit 62). */
int64_t rd_saturate(int n, const double *limit, double *tau);

/* y = M x for an n x n row-major M (a structure matrix map: x @ M.T in numpy), or y = x for M NULL. */
void rd_map(int n, const double *M, const double *x, double *y);

/* ControllerBase._saturate: tau clipped to +-limit, the actuator torques xi = A^-1 tau (A_inv n x n
 * row-major, or NULL: xi = tau) clipped to +-actuator_limit (or NULL: no limit); flags[j] = 1 where
 * joint j's or actuator j's torque was clipped, else 0. Returns 1 when an actuator torque was
 * clipped (tau is then no longer A xi), else 0. */
int rd_saturate_effort(int n, const double *limit, const double *A_inv, const double *actuator_limit, double *tau,
                       double *xi, double *flags);

/* The simulated plant: a model under gravity g, its friction on or off, the Coulomb sign smoothed
 * to tanh(qd / smooth) when smooth > 0. */
typedef struct {
    const rd_model *model;
    const double *g;   /* (3) */
    int friction;
    double smooth;
} rd_plant;

/* qdd = f(q, qd, u): the plant's direct dynamics under the joint torques u. */
int rd_plant_accel(const rd_plant *p, const double *q, const double *qd, const double *u, double *qdd, rd_work *w);

/* One classical RK4 step of x = (q, qd) (2 nq) over h under the held u, k1 = f(x) given:
 * x + (h/2) k1, x + (h/2) k2, x + h k3, then x + (h/6) (k1 + 2 k2 + 2 k3 + k4). */
int rd_plant_rk4(const rd_plant *p, double h, double *x, const double *k1, const double *u, rd_work *w);

/* `substeps` RK4 steps of h from x under the held u (a zero-order hold), k1 = f(x) of the first
 * given (or NULL: computed); x is updated only when every step succeeds and the state stays
 * within RD_DIVERGED (else RD_BAD_OUTPUT). */
int rd_plant_step(const rd_plant *p, double h, int substeps, double *x, const double *k1, const double *u, rd_work *w);

/* A simulated arm's period: the plant and how a period is cut into RK4 steps. */
typedef struct {
    rd_plant plant;
    int substeps;     /* RK4 steps per period (>= 1): h = dt / substeps */
    double max_step;  /* the longest RK4 step [s] (> 0; INFINITY: no bound) */
    int max_substeps; /* a period whose h exceeds max_step: 0 refuses it; else it is cut into
                       * ceil(dt / max_step) steps of dt / steps, at most max_substeps of them (a longer
                       * period: max_substeps steps of max_step, the simulated time falls behind) */
} rd_plant_period;

/* What rd_plant_advance did over one period. */
typedef struct {
    int steps;   /* RK4 steps taken (0: none) */
    double h;    /* their length [s] (0: none) */
    int braked;  /* 1: no command, the arm held (its velocities set to zero) */
    int lagging; /* 1: cut into max_substeps steps of max_step, shorter than dt in all */
} rd_plant_report;

/* One period dt [s] of a simulated arm, the one step of the simulation (Plant.advance; rd_simulate
 * calls its RK4 part, rd_plant_step), the simulator node (SimulatedPlant) and ros2_control's
 * SimulatedSystem.
 * The command u (nq joint torques [N m or N], held over the period):
 *   - NULL or NaN on every joint (ros2_control's "no command": before the first command, after a
 *     controller released the joints): the brakes hold the arm, x's velocities set to zero, its
 *     positions kept; applied = 0. This is done even when the period is refused;
 *   - NaN on some joints: zero effort on those joints;
 *   - then rd_plant_step of the period's steps (k1 = f(x, u) of the first, or NULL).
 * x = (q, qd) (2 nq) is updated; applied (nq): the torques held over the period (written always);
 * r: what was done. RD_BAD_SIZE for a refused period (dt not finite or <= 0, substeps < 1, or a
 * step over max_step with max_substeps 0), x then unchanged except for the brakes; else the status
 * of rd_plant_step (x unchanged unless RD_OK). No allocation. */
int rd_plant_advance(const rd_plant_period *p, double dt, const double *u, const double *k1, double *x,
                     double *applied, rd_plant_report *r, rd_work *w);

/* -- the generalized momentum observer (observer.c) -----------------------------------------------------
 * De Luca's residual of the external joint torques (Haddadin, De Luca and Albu-Schaeffer 2017, IEEE
 * T-RO): r = K_O [p(t) - p(0) - integral of (tau - Gamma_f + C^T qd - Q + r) dt], p = A(q) qd,
 * so that dr/dt = K_O (tau_ext - r) with the model exact; one update per tick, no allocation. */

/* p = A(q) qd (nq) and ctq = C^T(q, qd) qd (nq), the kinetic energy's gradient in q at a fixed qd, by one
 * forward and one backward recursion (rotor inertias, mimic joints and secondary links included). */
int rd_momentum(const rd_model *m, const double *q, const double *qd, double *p, double *ctq, rd_work *w);

/* The observer's options (nq values each unless said). */
typedef struct {
    const double *gain;      /* K_O [1/s] (> 0): the residual's bandwidth */
    const double *threshold; /* the threshold's fixed part [N m or N] (>= 0) */
    const double *relative;  /* the part that grows with the model torque [-] (>= 0): th = threshold + relative s */
    const double *gravity;   /* (3) [m/s^2], or NULL: the model's own */
    int friction;            /* 1: the model's friction Gamma_f (Khalil [7.26]) taken from tau; 0: none */
    double smooth;           /* > 0: the Coulomb sign smoothed to tanh(qd / smooth) [rad/s or m/s]; 0: sign(qd) */
    int hold;                /* 1: each update's tau held until the next (a command under a zero-order hold);
                              * 0: tau measured at each update (its integral by the trapezoidal rule) */
} rd_observer_options;

/* The observer's state, in the caller's memory (nq values each): written by the updates only. */
typedef struct {
    double *r;         /* the residual: the estimated external joint torques [N m or N] */
    double *p;         /* the generalized momentum A(q) qd of the last update */
    double *z;         /* p(0) + the integral of (tau - Gamma_f + C^T qd - Q + r) up to the last update */
    double *b;         /* the last update's C^T qd - Q - Gamma_f but the viscous friction's Fv qd */
    double *tau;       /* the last update's joint torques */
    double *model;     /* s: |tau - r| (the torque the model explains) through the residual's lag */
    double *threshold; /* the last update's threshold: threshold + relative s */
    double *q;         /* the last update's q (the viscous friction's integral, Fv (q_k - q_(k-1))) */
    double t;          /* the time of the last update [s] */
    int started;       /* 0: the next update starts the observer (r = 0, p(0) its momentum) */
    int collision;     /* 1: some |r_j| > threshold_j at the last update */
    int joint;         /* the last joint j with |r_j| > threshold_j (the isolated link's), or -1 */
} rd_observer;

/* Zeroes the state: the next update starts the observer. */
void rd_momentum_observer_reset(rd_observer *s, int nq);

/* One update at time t [s] (increasing) with the measured q, qd and the joint torques tau (nq each):
 * the residual by the trapezoidal rule (stable for any K_O dt), then the threshold and the detection.
 * RD_BAD_SIZE for invalid options (a gain <= 0, a negative threshold or smoothing, a non-finite value)
 * and RD_BAD_INPUT for a non-finite input or a time not after the last, the state then unchanged;
 * else the status of the recursions, or RD_BAD_OUTPUT for a residual that is not finite (reset the
 * state before the next update). */
int rd_momentum_observer_update(const rd_model *m, const rd_observer_options *o, rd_observer *s, double t,
                                const double *q, const double *qd, const double *tau, rd_work *w);

/* -- a compiled closed loop (simulate.c) -------------------------------------------------------------- */

enum { RD_SIM_MAX_JOINTS = 62 }; /* a tick's saturated joints are one bit each of an int64 */

#define RD_DIVERGED 1e150        /* a plant state this large has left any physical range */

/* The control laws the compiled loop runs. */
enum { RD_LAW_COMPUTED_TORQUE = 0, RD_LAW_PD_GRAVITY = 1 };

/* Joint-space computed torque (or PD with gravity compensation) on a rigid plant, RK4 under a
 * zero-order hold. */
typedef struct {
    const rd_model *ctrl, *plant; /* the controller's model, the simulated robot (same nq) */
    int law;                      /* RD_LAW_COMPUTED_TORQUE (rd_computed_torque) or RD_LAW_PD_GRAVITY (rd_pd_gravity) */
    int n, substeps, last;        /* joints; RK4 steps per tick; the horizon's last tick (no integration) */
    int position, predictive;     /* computed torque: Khalil [9.29] instead of [9.24]; the model on the desired state [9.31] */
    int desired_friction;         /* computed torque: H^'s friction at the desired velocity (else the measured one) */
    int plant_friction;           /* the plant's friction */
    double h, smooth;             /* RK4 step [s]; the plant's Coulomb smoothing v_s (0: sign) */
    const double *kp, *kd, *limit;/* gains, joint effort limits (n) */
    const double *actuator_limit; /* (n) or NULL */
    const double *ctrl_A_inv;     /* the controller's joint -> actuator map A^-1 (n x n) or NULL: identity */
    const double *plant_A;        /* the plant's actuator -> joint map A (n x n) or NULL: identity */
    const double *g_plant;        /* the plant's gravity (3) */
    const double *pos_std, *vel_std; /* measurement noise std (n), used with rd_sim_log.zq / zqd */
} rd_sim;

/* Per tick k, rows of n values: inputs (reference, unit noise draws or NULL, disturbance), the log. */
typedef struct {
    const double *qr, *qdr, *qddr, *zq, *zqd, *dist;
    double *q, *qd, *qdd, *tau, *effort;
    int64_t *status, *clip; /* Status flags; the saturated joints' bits */
} rd_sim_log;

/* Ticks [k0, k1) from the state x (2n, updated); *done: ticks completed. RD_OK, or the status of
 * what stopped it before tick *done (to be taken by the general path). */
int rd_simulate(const rd_sim *s, const rd_sim_log *L, int k0, int k1, double *x, int *done, rd_work *wc, rd_work *wp);

/* A discrete linear system x_k = Ad x_(k-1) + Bd u_(k-1) (row-major matrices). */
typedef struct {
    int m, p;         /* states, inputs */
    const double *Ad; /* (m x m) */
    const double *Bd; /* (m x p) */
} rd_linear_system;

/* x_k = Ad x_(k-1) + Bd u_(k-1) from x_0 (m) over K steps under the inputs U (K x p); E (K x ne):
 * the first ne values of each x_k. work: 2 m doubles. */
void rd_linear_recurrence(const rd_linear_system *s, int ne, int K, const double *x0, const double *U, double *E,
                          double *work);

/* -- time-optimal path parameterization (reachability.c) ----------------------------------------------
 * TOPP-RA (Pham and Pham 2018) over a grid of n points of a path q(s): x = sdot^2, u = sddot, each
 * limit a row lo <= a u + b x + c <= hi at every point. */

typedef struct {
    int n;                   /* grid points (>= 2) */
    int m;                   /* rows at each point */
    const double *s;         /* (n) the grid, increasing */
    const double *a, *b, *c; /* (n x m, row-major): row k at point i is a u + b x + c */
    const double *lo, *hi;   /* (n x m): its bounds (-INFINITY, INFINITY: that side unbounded) */
    const double *xmax;      /* (n) x <= xmax (velocity limits; INFINITY: none); x >= 0 always */
    double x_start, x_end;   /* x at s[0] and at s[n - 1] (0, 0: from rest to rest) */
    const double *mid;       /* (n - 1) x (3 m + 3) or NULL: each segment's a, b, c (m each) at its
                              * midpoint, where x = x_i + d u, and x's bounds at its quarter points; then
                              * each row's end values plus its midpoint's distance from their chord hold
                              * (timing.c's chord-plus-error bound), and x within the bounds */
    int keep;                /* 0: every controllable set computed; k > 0: those of the last k points kept
                              * from the previous call on t (its defining set), whose rows differed from
                              * these only on the segments below point n - k; where the forward pass
                              * meets that call's x at or above point n - k, t's x and u from there on
                              * are that call's (kept) */
    int changed_from;        /* with keep: the rows differed from the last call's on no segment below this
                              * one either; where a controllable set below it comes out as that call's,
                              * the sets below are that call's, and so is the timing up to there (kept) */
} rd_path_constraints;

typedef struct {
    double *K_lo, *K_hi; /* (n) the controllable sets [K_lo, K_hi] of x (the backward pass) */
    double *x;           /* (n) the timing's x = sdot^2 (the forward pass) */
    double *u;           /* (n - 1) u on each segment: x[i + 1] = x[i] + 2 (s[i + 1] - s[i]) u[i] */
    void *work;          /* rd_reachability_work(m) bytes */
    int *defining;       /* (2 n) or NULL: the half-planes that defined each segment's K_hi (for keep) */
} rd_path_timing;

size_t rd_reachability_work(int m);
/* The time-optimal x and u on the grid: every row holds at both ends of every segment (first-order
 * interpolation). Returns -1 when timed, else the point whose controllable set is empty (the path
 * cannot be followed from there to its end within the limits). No allocation. */
int rd_reachability(const rd_path_constraints *p, rd_path_timing *t);

/* The time-optimal timing of a path (timing.c): rd_reachability solved until the full model holds
 * between the grid points too. Rows: |a u + b x + g + T Gamma_f(q' sdot)| <= limit, with the joints'
 * friction Gamma_f (Khalil [7.26]) at the velocity q' sdot mapped by T; velocities |q' sdot| <= vmax. */
typedef struct {
    const rd_model *model;   /* the joints' friction (rd_friction); NULL: none */
    int n, m, nq;            /* grid points (>= 2), rows, joints */
    const double *s;         /* (n) the grid, increasing */
    const double *a, *b, *g; /* (n x m) each row's coefficients at the grid: a u + b x + g (g: gravity, no friction) */
    const double *dq;        /* (n x nq) q' = dq/ds at the grid */
    const double *knot;      /* (n) nonzero where the path is less smooth (a spline's knot), or NULL */
    const double *T;         /* (m x nq) each row's share of the joint torques (its friction); zero for kinematic rows */
    const double *limit;     /* (m) |row| <= limit */
    const double *vmax;      /* (nq) |q' sdot| <= vmax (INFINITY: none) */
    int speed_friction;      /* 1: the friction changes with the speed (viscous, Stribeck): its secant in b */
    int max_solves;          /* the most solves before giving up */
    double tolerance;        /* the relative excess accepted */
} rd_topp_problem;

typedef struct {
    double *x, *u, *K_lo, *K_hi; /* as rd_path_timing: (n), (n - 1), (n), (n) */
    double *t;                   /* (n) or NULL: when the timing passes the grid points [s], t_0 = 0 and a
                                  * segment 2 d / (sdot_i + sdot_(i+1)) (written with a timing) */
    void *work;                  /* rd_time_optimal_work(n, m, nq) bytes */
    int solves;                  /* the solves made */
    int failed;                  /* -1, or the point whose controllable set is empty (rd_reachability), or
                                  * the first of two neighbouring points at rest (x = 0: the timing stops) */
} rd_topp_result;

size_t rd_time_optimal_work(int n, int m, int nq);
/* RD_OK (r->failed says whether a timing was found), or RD_SINGULAR when a limit was still exceeded
 * after max_solves. No allocation. */
int rd_time_optimal(const rd_topp_problem *p, rd_topp_result *r);

/* -- a path and the dynamics along it (path.c) -------------------------------------------------------- */

/* A piecewise polynomial path q(s) as scipy's PPoly holds one (a CubicSpline's): on the piece
 * [x_i, x_(i+1)), joint k is sum_j c[j, i, k] (s - x_i)^(order - 1 - j). */
enum { RD_PPOLY_MAX_ORDER = 32 };
typedef struct {
    int order, pieces, nq; /* the coefficients per piece (the degree + 1, at most RD_PPOLY_MAX_ORDER), the pieces, the joints */
    const double *x;       /* (pieces + 1) the breakpoints, increasing */
    const double *c;       /* (order x pieces x nq, row-major) the coefficients */
} rd_ppoly;

/* q, q' and q'' (n x nq each) at the points s (n, increasing) of the path pp, each point in the
 * piece x_i <= s < x_(i+1) (before x_1: the first; from x_pieces on: the last, extended), by
 * scipy's own operations (the same doubles as PPoly's). Returns -1, or the first derivative (0, 1, 2)
 * with a value that is not finite (0 also for an order beyond RD_PPOLY_MAX_ORDER). */
int rd_ppoly_derivatives(const rd_ppoly *pp, int n, const double *s, double *q, double *dq, double *ddq);

/* The path through K >= 3 waypoints y (K x nq, row-major) that robot_dynamics.trajectory.path_through
 * documents: the C2 cubic spline with not-a-knot ends (scipy's CubicSpline, its equations) on the
 * chord-length parameter s (K, written: s_k = sum of |y_j - y_(j-1)| up to k over the total, s_0 = 0,
 * s_(K-1) = 1). c (4 x (K - 1) x nq, rd_ppoly's layout) written; work: 3 K + K nq doubles. Returns
 * -1, -2 when a waypoint is not finite, or k when waypoints k and k + 1 are equal. The tridiagonal
 * system of the slopes is solved by Gaussian elimination with partial pivoting (LAPACK's dgtsv). */
int rd_spline_through(int K, int nq, const double *y, double *s, double *c, double *work);

/* time_optimal's grid on [0, 1]: count >= 2 evenly spaced points (s_j = j (1 / (count - 1)), the last
 * 1, as NumPy's linspace) with the k knots (increasing, inside (0, 1)) among them: a knot's nearest
 * interior point moved onto it where within a third of the step (one knot a point), else the knot
 * added in order. s and flags (count + k each; flags 1 at the knots, else 0) written, work: k doubles;
 * returns the points, or -1 when the knots are not increasing inside (0, 1). */
int rd_path_grid(int count, int k, const double *knots, double *s, double *flags, double *work);

/* The coefficients of the joint torques along a path at n of its points (path->q, ->qd = q' = dq/ds,
 * ->qdd = q'' = d2q/ds2: rows of nq values), friction left out: a = A(q) q' (n x nq),
 * b = A(q) q'' + C(q, q') q' (n x nq) and g = Q(q) (n x nq) under gravity (3, base axes; NULL: the
 * model's), so that tau = a u + b x + g at sddot = u, sdot^2 = x. Each point's are rd_rnea's at
 * (q, 0, q') and (q, q', q'') without gravity and at (q, 0, 0) with it, to the bit; four points a
 * call share their joint transforms. RD_OK or RD_BAD_OUTPUT. */
int rd_path_coefficients(const rd_model *m, int n, const rd_input *path, const double *gravity, double *a, double *b,
                         double *g, rd_work *w);

#ifdef __cplusplus
}
#endif

#endif
